// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// @title StakingPool
/// @notice Holds the GPU owners' stake in native token, so no coordinator key can move it: an owner
///         stakes, requests an unbond and withdraws after the unbonding period this contract enforces;
///         the slasher fixed at deployment (the coordinator's conviction key) may cut a position by at
///         most `slashBps` once per conviction, naming the evidence's sha256; the cut goes to the rewards
///         pool, which pays the stakers' rewards (the base APY × their tier's multiplier, simple interest
///         accrued every second). A claim can never take more than the pool holds.
/// @dev Nothing is upgradeable and nothing can be changed after deployment: every parameter is set by
///      the constructor. Invariant (tested on anvil): balance = Σ (staked + unbonding) + rewardsPool.
///      Every state-changing function holds a reentrancy lock and pays out last.
///      Compiled for the berlin EVM (no PUSH0), like StableToken.
///      Migration from the vault era (coordinator/README.md, "Migration from the staking vault"): the
///      migrator fixed at deployment (the old staking vault, or nobody) may credit positions it pays
///      for in full — `migrateStake`, `migrateUnbonding` — each migration id once, never with an
///      unbonding longer than the pool's own, until it calls `endMigration` (for good). It can only
///      give its own tokens away: nothing it does takes from an owner or from the rewards pool.
contract StakingPool {
    uint256 public constant BPS = 10_000;
    uint256 public constant SECONDS_PER_YEAR = 31_536_000;
    /// @notice accruedScaled / REWARD_SCALE = claimable wei (no fraction of a wei is lost to rounding).
    uint256 public constant REWARD_SCALE = BPS * BPS * SECONDS_PER_YEAR;
    /// @notice Most unbondings one owner may have open at once (bounds the gas of withdraw and slash).
    uint256 public constant MAX_UNBONDINGS = 32;

    address public immutable slasher;
    /// @notice The only address that may credit vault-era positions (address(0): none).
    address public immutable migrator;
    /// @notice Set once by the migrator: no migration call is accepted after it.
    bool public migrationEnded;
    /// @notice Migration ids already credited (each vault-era position moves in once).
    mapping(bytes32 => bool) public migrated;
    /// @notice Seconds between requestUnbond and the earliest withdraw of that amount.
    uint256 public immutable unbondingPeriod;
    /// @notice The largest fraction (basis points) one slash may take.
    uint256 public immutable slashBps;
    uint256 public immutable baseApyBps;
    /// @notice The reward index is baseApyBps × (now − startTime).
    uint256 public immutable startTime;

    uint256[] private tierMinStake;
    uint256[] private tierMultiplierBps;

    struct Unbonding {
        uint192 amount;
        uint64 releaseAt;
    }

    struct Position {
        uint256 staked;
        uint256 unbonding;
        uint256 indexSnapshot;
        uint256 accruedScaled;
        uint256 multiplierBps;
        uint256 head;
    }

    mapping(address => Position) private positions;
    mapping(address => Unbonding[]) private unbondingQueue;
    /// @notice Conviction ids already slashed (one slash per conviction).
    mapping(bytes32 => bool) public convictionSlashed;

    uint256 public totalStaked;
    uint256 public totalUnbonding;
    uint256 public rewardsPool;
    uint256 private lock = 1;

    event Staked(address indexed owner, uint256 amount, uint256 staked);
    event UnbondRequested(address indexed owner, uint256 amount, uint256 releaseAt, uint256 staked);
    event Withdrawn(address indexed owner, uint256 amount, uint256 unbonding);
    event Slashed(
        address indexed owner,
        bytes32 indexed convictionId,
        uint256 bps,
        uint256 fromStaked,
        uint256 fromUnbonding,
        bytes32 evidenceHash,
        uint256 staked
    );
    /// @notice A vault-era position credited: `staked` to the stake, or `unbonding` released at `releaseAt`.
    event Migrated(
        address indexed owner,
        bytes32 indexed migrationId,
        uint256 staked,
        uint256 unbonding,
        uint256 releaseAt
    );
    event MigrationEnded();
    event RewardsFunded(address indexed funder, uint256 amount, uint256 pool);
    event RewardsClaimed(address indexed owner, uint256 amount, uint256 pool);

    error ZeroAmount();
    error ExceedsStake(uint256 staked, uint256 requested);
    error TooManyUnbondings();
    error NothingToWithdraw(uint256 nextReleaseAt);
    error NotSlasher();
    error BpsOutOfRange(uint256 bps, uint256 cap);
    error AlreadySlashed(bytes32 convictionId);
    error ExceedsClaimable(uint256 claimable, uint256 requested);
    error InsufficientPool(uint256 pool, uint256 requested);
    error Reentrant();
    error TransferFailed();
    error InvalidConfig();
    error NotMigrator();
    error MigrationClosed();
    error AlreadyMigrated(bytes32 migrationId);
    error ReleaseTooLate(uint256 releaseAt, uint256 latest);

    modifier nonReentrant() {
        if (lock != 1) revert Reentrant();
        lock = 2;
        _;
        lock = 1;
    }

    /// @param slasher_ the only address that may slash.
    /// @param tierMinStake_ the ladder's thresholds in wei, ascending, the first 0.
    /// @param tierMultiplierBps_ each rung's reward multiplier (10000 = 1.0).
    /// @param migrator_ the only address that may credit vault-era positions; address(0) for none.
    constructor(
        address slasher_,
        uint256 unbondingPeriod_,
        uint256 slashBps_,
        uint256 baseApyBps_,
        uint256[] memory tierMinStake_,
        uint256[] memory tierMultiplierBps_,
        address migrator_
    ) {
        uint256 n = tierMinStake_.length;
        if (slasher_ == address(0) || slashBps_ > BPS || n == 0 || n != tierMultiplierBps_.length) {
            revert InvalidConfig();
        }
        if (tierMinStake_[0] != 0) revert InvalidConfig();
        for (uint256 i = 1; i < n; i++) {
            if (tierMinStake_[i] <= tierMinStake_[i - 1]) revert InvalidConfig();
        }
        slasher = slasher_;
        migrator = migrator_;
        unbondingPeriod = unbondingPeriod_;
        slashBps = slashBps_;
        baseApyBps = baseApyBps_;
        startTime = block.timestamp;
        tierMinStake = tierMinStake_;
        tierMultiplierBps = tierMultiplierBps_;
    }

    // ---- owners ----

    /// @notice Stakes msg.value.
    function stake() external payable nonReentrant {
        if (msg.value == 0) revert ZeroAmount();
        Position storage p = _settle(msg.sender);
        p.staked += msg.value;
        totalStaked += msg.value;
        p.multiplierBps = _multiplierFor(p.staked);
        emit Staked(msg.sender, msg.value, p.staked);
    }

    /// @notice Moves `amount` from staked to unbonding; withdrawable after unbondingPeriod.
    function requestUnbond(uint256 amount) external nonReentrant {
        if (amount == 0) revert ZeroAmount();
        Position storage p = _settle(msg.sender);
        if (amount > p.staked) revert ExceedsStake(p.staked, amount);
        Unbonding[] storage queue = unbondingQueue[msg.sender];
        if (queue.length - p.head >= MAX_UNBONDINGS) revert TooManyUnbondings();
        uint256 releaseAt = block.timestamp + unbondingPeriod;
        p.staked -= amount;
        p.unbonding += amount;
        totalStaked -= amount;
        totalUnbonding += amount;
        p.multiplierBps = _multiplierFor(p.staked);
        queue.push(Unbonding({amount: uint192(amount), releaseAt: uint64(releaseAt)}));
        emit UnbondRequested(msg.sender, amount, releaseAt, p.staked);
    }

    /// @notice Pays out every unbonding whose period has ended; refused when none has.
    function withdraw() external nonReentrant {
        Position storage p = positions[msg.sender];
        Unbonding[] storage queue = unbondingQueue[msg.sender];
        uint256 head = p.head;
        uint256 amount;
        while (head < queue.length && queue[head].releaseAt <= block.timestamp) {
            amount += queue[head].amount;
            delete queue[head];
            head++;
        }
        if (amount == 0) revert NothingToWithdraw(head < queue.length ? queue[head].releaseAt : 0);
        p.head = head;
        p.unbonding -= amount;
        totalUnbonding -= amount;
        emit Withdrawn(msg.sender, amount, p.unbonding);
        _send(msg.sender, amount);
    }

    /// @notice Pays `amount` of the caller's accrued rewards out of the pool.
    function claim(uint256 amount) external nonReentrant {
        if (amount == 0) revert ZeroAmount();
        Position storage p = _settle(msg.sender);
        uint256 claimableWei = p.accruedScaled / REWARD_SCALE;
        if (amount > claimableWei) revert ExceedsClaimable(claimableWei, amount);
        if (amount > rewardsPool) revert InsufficientPool(rewardsPool, amount);
        p.accruedScaled -= amount * REWARD_SCALE;
        rewardsPool -= amount;
        emit RewardsClaimed(msg.sender, amount, rewardsPool);
        _send(msg.sender, amount);
    }

    /// @notice Adds msg.value to the rewards pool (anyone may).
    function fundRewards() external payable nonReentrant {
        if (msg.value == 0) revert ZeroAmount();
        rewardsPool += msg.value;
        emit RewardsFunded(msg.sender, msg.value, rewardsPool);
    }

    // ---- slasher ----

    /// @notice Cuts `bps` of the owner's staked and of each unbonding amount into the rewards pool.
    /// @param convictionId the conviction's id (at most one slash each).
    /// @param evidenceHash sha256 of the evidence JSON the coordinator serves publicly.
    function slash(address owner, uint256 bps, bytes32 convictionId, bytes32 evidenceHash) external nonReentrant {
        if (msg.sender != slasher) revert NotSlasher();
        if (bps == 0 || bps > slashBps) revert BpsOutOfRange(bps, slashBps);
        if (convictionSlashed[convictionId]) revert AlreadySlashed(convictionId);
        convictionSlashed[convictionId] = true;
        Position storage p = _settle(owner);
        uint256 fromStaked = (p.staked * bps) / BPS;
        p.staked -= fromStaked;
        totalStaked -= fromStaked;
        p.multiplierBps = _multiplierFor(p.staked);
        uint256 fromUnbonding;
        Unbonding[] storage queue = unbondingQueue[owner];
        for (uint256 i = p.head; i < queue.length; i++) {
            uint256 cut = (uint256(queue[i].amount) * bps) / BPS;
            queue[i].amount -= uint192(cut);
            fromUnbonding += cut;
        }
        p.unbonding -= fromUnbonding;
        totalUnbonding -= fromUnbonding;
        rewardsPool += fromStaked + fromUnbonding;
        emit Slashed(owner, convictionId, bps, fromStaked, fromUnbonding, evidenceHash, p.staked);
    }

    // ---- migrator (vault era → pool) ----

    /// @notice Credits msg.value to `owner`'s staked amount, once per `migrationId`.
    function migrateStake(address owner, bytes32 migrationId) external payable nonReentrant {
        _migration(migrationId);
        Position storage p = _settle(owner);
        p.staked += msg.value;
        totalStaked += msg.value;
        p.multiplierBps = _multiplierFor(p.staked);
        emit Migrated(owner, migrationId, msg.value, 0, 0);
    }

    /// @notice Credits msg.value to `owner` as an unbonding released at `releaseAt` (the vault era's
    ///         release time; never later than an unbond requested now would be), once per `migrationId`.
    function migrateUnbonding(address owner, bytes32 migrationId, uint64 releaseAt) external payable nonReentrant {
        _migration(migrationId);
        uint256 latest = block.timestamp + unbondingPeriod;
        if (releaseAt > latest) revert ReleaseTooLate(releaseAt, latest);
        Position storage p = positions[owner];
        Unbonding[] storage queue = unbondingQueue[owner];
        if (queue.length - p.head >= MAX_UNBONDINGS) revert TooManyUnbondings();
        p.unbonding += msg.value;
        totalUnbonding += msg.value;
        queue.push(Unbonding({amount: uint192(msg.value), releaseAt: releaseAt}));
        emit Migrated(owner, migrationId, 0, msg.value, releaseAt);
    }

    /// @notice Closes the migration for good.
    function endMigration() external {
        if (msg.sender != migrator) revert NotMigrator();
        if (migrationEnded) revert MigrationClosed();
        migrationEnded = true;
        emit MigrationEnded();
    }

    function _migration(bytes32 migrationId) private {
        if (msg.sender != migrator || migrator == address(0)) revert NotMigrator();
        if (migrationEnded) revert MigrationClosed();
        if (msg.value == 0) revert ZeroAmount();
        if (migrated[migrationId]) revert AlreadyMigrated(migrationId);
        migrated[migrationId] = true;
    }

    // ---- views ----

    /// @notice An owner's position now: staked, unbonding (of which withdrawable now), claimable
    ///         rewards (wei), the multiplier it accrues at and its tier's index in the ladder.
    function positionOf(address owner)
        external
        view
        returns (
            uint256 staked,
            uint256 unbonding,
            uint256 withdrawable,
            uint256 claimable,
            uint256 multiplierBps,
            uint256 tier
        )
    {
        Position storage p = positions[owner];
        staked = p.staked;
        unbonding = p.unbonding;
        Unbonding[] storage queue = unbondingQueue[owner];
        for (uint256 i = p.head; i < queue.length && queue[i].releaseAt <= block.timestamp; i++) {
            withdrawable += queue[i].amount;
        }
        claimable = (p.accruedScaled + _pending(p)) / REWARD_SCALE;
        tier = _tierIndex(p.staked);
        multiplierBps = tierMultiplierBps[tier];
    }

    /// @notice The owner's open unbondings, oldest first.
    function unbondingsOf(address owner)
        external
        view
        returns (uint256[] memory amounts, uint256[] memory releaseTimes)
    {
        Unbonding[] storage queue = unbondingQueue[owner];
        uint256 head = positions[owner].head;
        uint256 n = queue.length - head;
        amounts = new uint256[](n);
        releaseTimes = new uint256[](n);
        for (uint256 i = 0; i < n; i++) {
            amounts[i] = queue[head + i].amount;
            releaseTimes[i] = queue[head + i].releaseAt;
        }
    }

    /// @notice The tier ladder: thresholds (wei) and multipliers (bps), lowest first.
    function tiers() external view returns (uint256[] memory minStake, uint256[] memory multiplierBps) {
        return (tierMinStake, tierMultiplierBps);
    }

    // ---- internal ----

    /// @dev Never moves backwards, even for a call simulated at an earlier time than the last change.
    function _index() private view returns (uint256) {
        return block.timestamp > startTime ? baseApyBps * (block.timestamp - startTime) : 0;
    }

    function _pending(Position storage p) private view returns (uint256) {
        uint256 index = _index();
        return index > p.indexSnapshot ? p.staked * (index - p.indexSnapshot) * p.multiplierBps : 0;
    }

    /// @dev Accrues everything earned up to now at the old quantity (call before any change).
    function _settle(address owner) private returns (Position storage p) {
        p = positions[owner];
        p.accruedScaled += _pending(p);
        uint256 index = _index();
        if (index > p.indexSnapshot) p.indexSnapshot = index;
    }

    function _tierIndex(uint256 staked) private view returns (uint256 reached) {
        uint256 n = tierMinStake.length;
        for (uint256 i = 1; i < n && staked >= tierMinStake[i]; i++) reached = i;
    }

    function _multiplierFor(uint256 staked) private view returns (uint256) {
        return tierMultiplierBps[_tierIndex(staked)];
    }

    function _send(address to, uint256 amount) private {
        (bool ok,) = to.call{value: amount}("");
        if (!ok) revert TransferFailed();
    }
}

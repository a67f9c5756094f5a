// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

interface IStakingPool {
    function stake() external payable;
    function requestUnbond(uint256 amount) external;
    function withdraw() external;
    function claim(uint256 amount) external;
}

/// @notice Test only (never deployed by the network): an owner contract that calls back into the
///         pool while being paid, to show the pool refuses reentrant calls. It records the inner
///         call's revert data and lets the outer payment finish.
contract ReentrantStaker {
    IStakingPool public immutable pool;
    /// 0: accept payments quietly; 1: call withdraw again when paid; 2: call claim(1) again when paid.
    uint8 public mode;
    bool public reentered;
    bytes public reentryError;

    constructor(IStakingPool pool_) {
        pool = pool_;
    }

    function stake() external payable {
        pool.stake{value: msg.value}();
    }

    function requestUnbond(uint256 amount) external {
        pool.requestUnbond(amount);
    }

    function withdraw(uint8 mode_) external {
        mode = mode_;
        pool.withdraw();
    }

    function claim(uint256 amount, uint8 mode_) external {
        mode = mode_;
        pool.claim(amount);
    }

    receive() external payable {
        uint8 m = mode;
        mode = 0;
        if (m == 1) {
            try pool.withdraw() {
                reentered = true;
            } catch (bytes memory e) {
                reentryError = e;
            }
        } else if (m == 2) {
            try pool.claim(1) {
                reentered = true;
            } catch (bytes memory e) {
                reentryError = e;
            }
        }
    }
}

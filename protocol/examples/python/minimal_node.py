#!/usr/bin/env python3
"""A minimal gpumesh node (NODE_PROTOCOL.md v0.1) in Python, with Debian's python3-websockets,
python3-ecdsa and python3-pycryptodome only. It serves one fake chat model ("py-echo") and passes
`npx gpumesh-conformance node`. Usage: minimal_node.py ws://127.0.0.1:7070 [hex private key]
With GPUMESH_KIT_MODEL=<path of gpumesh-conformance kit-model's file> (and python3-numpy) it is also
a verifier: it serves `verify` jobs on the kit model with kit_verifier.py (§9 "Verification"), and
with the job's `sampling` (v0.2) describes each position's processed distribution (§9 "Sampling")."""
import asyncio, json, os, sys, time
from datetime import datetime, timezone
import websockets
from Cryptodome.Hash import keccak
from ecdsa import SECP256k1, SigningKey, VerifyingKey
from ecdsa.util import sigdecode_string, sigencode_strings

N = SECP256k1.order
MODEL, CAPACITY, LIMIT_BEFORE_WELCOME = "py-echo", 2, 65536
KIT = None  # the kit model's verifier, when GPUMESH_KIT_MODEL names its file
if os.environ.get("GPUMESH_KIT_MODEL"):
    from kit_verifier import KitVerifier
    KIT = KitVerifier(os.environ["GPUMESH_KIT_MODEL"])
# What the node accepts in each phase (§4); error and bye always. Anything else: 4005.
PHASES = {"hello": {"challenge"}, "auth": {"welcome"}, "manifest": {"manifest_ack", "ping", "pong"},
          "ready": {"manifest_ack", "ping", "pong", "job", "cancel", "drain"}}
ALL = {"hello", "challenge", "auth", "welcome", "manifest", "manifest_ack", "presence", "ping", "pong",
       "job", "chunk", "result", "error", "cancel", "drain", "bye"}
# A small part of frames.schema.json: required members and their JSON types, per type received.
NEEDS = {"challenge": {"nonce": str, "issuedAt": str, "expiresAt": str, "coordinatorId": str},
         "welcome": {"version": int, "heartbeatIntervalMs": int, "ttlMs": int, "maxFrameBytes": int},
         "manifest_ack": {"scopes": list, "models": list}, "ping": {"ts": int}, "pong": {"ts": int},
         "job": {"jobId": str, "kind": str, "model": str, "request": dict, "stream": bool, "timeoutMs": int},
         "cancel": {"jobId": str}, "drain": {"deadlineMs": int}, "bye": {"reason": str},
         "error": {"code": str, "message": str, "retryable": bool}}


def keccak256(data): return keccak.new(digest_bits=256, data=data).digest()


def personal_sign(key, text):  # EIP-191 (§3): length in UTF-8 bytes, low-s, v = 27 + recovery id
    data = text.encode()
    digest = keccak256(b"\x19Ethereum Signed Message:\n" + str(len(data)).encode() + data)
    r, s = key.sign_digest_deterministic(digest, sigencode=sigencode_strings)
    s = min(int.from_bytes(s, "big"), N - int.from_bytes(s, "big")).to_bytes(32, "big")
    candidates = VerifyingKey.from_public_key_recovery_with_digest(r + s, digest, SECP256k1, sigdecode=sigdecode_string)
    v = 27 + [c.to_string() for c in candidates].index(key.get_verifying_key().to_string())
    return "0x" + (r + s).hex() + format(v, "02x")


def now_iso(): return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def canonical(value): return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class ProtocolError(Exception):
    def __init__(self, code, close): super().__init__(code); self.code, self.close = code, close


class Session:
    def __init__(self, ws, key, node_id):
        self.ws, self.key, self.node_id = ws, key, node_id
        self.phase, self.limit, self.status, self.capacity = "hello", LIMIT_BEFORE_WELCOME, "online", CAPACITY
        self.jobs, self.heard, self.ttl, self.tasks = {}, time.monotonic(), None, []

    async def send(self, frame):
        await self.ws.send(json.dumps({"v": 0, **frame}))

    async def fail(self, code, close):  # a session error: error frame, then the close (§10)
        await self.send({"type": "error", "code": code, "message": code, "retryable": close in (4009, 4010)})
        await self.ws.close(close, code)

    def parse(self, data):  # the checks of §2, in order
        if isinstance(data, bytes): raise ProtocolError("malformed_frame", 4000)
        if len(data.encode()) > self.limit: raise ProtocolError("frame_too_large", 4003)
        try: frame = json.loads(data)
        except ValueError: raise ProtocolError("malformed_frame", 4000)
        if not isinstance(frame, dict): raise ProtocolError("malformed_frame", 4000)
        if frame.get("type") not in ALL: raise ProtocolError("unknown_type", 4001)
        v = frame.get("v")
        if type(v) is not int or v < 0: raise ProtocolError("schema_violation", 4002)
        if v != 0: raise ProtocolError("unsupported_version", 4004)
        for name, kind in NEEDS.get(frame["type"], {}).items():
            if not isinstance(frame.get(name), kind) or (kind is int and isinstance(frame[name], bool)):
                raise ProtocolError("schema_violation", 4002)
        if frame["type"] not in PHASES[self.phase] | {"error", "bye"}: raise ProtocolError("out_of_order", 4005)
        return frame

    async def presence(self):  # online below capacity, busy at it (§8)
        if self.status in ("online", "busy"): self.status = "busy" if len(self.jobs) >= self.capacity else "online"
        await self.send({"type": "presence", "status": self.status,
                         "load": {"inFlight": len(self.jobs), "capacity": self.capacity}})

    async def heartbeat(self, interval):  # ping every interval; silence for ttlMs ends the session (§8)
        while self.ws.open:
            await asyncio.sleep(interval / 1000)
            if time.monotonic() - self.heard > self.ttl / 1000: return await self.fail("heartbeat_timeout", 4009)
            await self.send({"type": "ping", "ts": int(time.time() * 1000)})

    async def handle(self, f):
        t = f["type"]
        if t == "challenge":
            text = "\n".join(["gpumesh node authentication", f"Coordinator: {f['coordinatorId']}",
                              f"Node: {self.node_id.lower()}", f"Nonce: {f['nonce']}",
                              f"Issued At: {f['issuedAt']}", f"Expiration Time: {f['expiresAt']}"])
            self.phase = "auth"
            await self.send({"type": "auth", "signature": personal_sign(self.key, text)})
        elif t == "welcome":
            self.phase, self.limit, self.ttl = "manifest", f["maxFrameBytes"], f["ttlMs"]
            self.capacity = min(CAPACITY, f.get("maxConcurrentJobs", CAPACITY))  # the tier's limit (§7)
            self.tasks.append(asyncio.create_task(self.heartbeat(f["heartbeatIntervalMs"])))
            free = {"currency": "USD", "inputPerMTok": "0", "outputPerMTok": "0"}
            models = [{"id": MODEL, "family": "chat", "contextLength": 2048, "maxConcurrency": CAPACITY, "price": free}]
            scopes = ["infer.chat"]
            if KIT:  # a text model with its file's sha256, under scope verify (§7, §9 "Verification")
                models.append({"id": "gpumesh-kit", "family": "text", "contextLength": KIT.context,
                               "maxConcurrency": CAPACITY, "price": free, "sha256": KIT.sha256})
                scopes += ["infer.text", "verify"]
            manifest = {"nodeId": self.node_id, "role": "cpu", "runtimes": [{"name": "python-echo", "version": "0.1"}],
                        "hardware": {"gpus": [], "cpu": {"model": "any", "cores": 1, "threads": 1, "arch": "x64"},
                                     "ramBytes": 1 << 30},
                        "models": models, "scopes": scopes,
                        "software": {"name": "gpumesh-python-example", "version": "0.1"},
                        "protocolVersion": 0, "issuedAt": now_iso()}
            await self.send({"type": "manifest", "manifest": manifest,
                             "signature": personal_sign(self.key, canonical(manifest))})
        elif t == "manifest_ack":
            if self.phase != "ready": self.phase = "ready"; await self.presence()
        elif t == "ping":
            await self.send({"type": "pong", "ts": f["ts"]})
        elif t == "job":
            await self.accept(f)
        elif t == "cancel" and f["jobId"] in self.jobs:
            self.jobs[f["jobId"]]["cancelled"] = True
        elif t == "drain" and self.status != "draining":
            self.status = "draining"
            await self.presence()
            self.tasks.append(asyncio.create_task(self.deadline(f["deadlineMs"])))
            await self.leave_if_drained()
        elif t == "bye":
            await self.ws.close(1000, "bye")
        # error frames from the coordinator are only logged (§4); pong needs nothing.

    async def deadline(self, ms):
        await asyncio.sleep(ms / 1000)
        for job in self.jobs.values(): job["cancelled"] = True

    async def leave_if_drained(self):
        if self.status == "draining" and not self.jobs:
            self.status = "offline"
            await self.presence()
            await self.send({"type": "bye", "reason": "drained"})
            await self.ws.close(1000, "drained")

    async def accept(self, job):
        jid, req = job["jobId"], job["request"]
        refuse = lambda code, retry: self.send({"type": "error", "jobId": jid, "code": code, "message": code, "retryable": retry})
        if jid in self.jobs: return await refuse("duplicate_job", False)
        if self.status == "draining": return await refuse("draining", True)
        if len(self.jobs) >= self.capacity: return await refuse("overloaded", True)
        if KIT and job["model"] == "gpumesh-kit":
            if job["kind"] != "verify": return await refuse("invalid_request", False)
            problem = verify_problem(req)
            if problem: return await refuse(*problem)
            self.jobs[jid] = {"cancelled": False}
            await self.presence()
            return self.tasks.append(asyncio.create_task(self.verify(job)))
        if job["model"] != MODEL: return await refuse("model_not_found", True)  # job.model decides (§9)
        ok = isinstance(req.get("messages"), list) if job["kind"] == "chat" else isinstance(req.get("prompt"), str)
        if job["kind"] == "embedding" or not ok: return await refuse("invalid_request", False)
        self.jobs[jid] = {"cancelled": False}
        await self.presence()  # counts the job before its first chunk (§8)
        self.tasks.append(asyncio.create_task(self.run(job)))

    async def verify(self, job):  # the forward pass runs in a thread: heartbeats go on meanwhile
        jid, req = job["jobId"], job["request"]
        try:
            fields = await asyncio.to_thread(
                KIT.verify, req["promptTokenIds"], req["completionTokenIds"], req["topK"], req.get("sampling"))
            n = len(req["promptTokenIds"]) + len(req["completionTokenIds"])
            await self.send({"type": "result", "jobId": jid, "response": {
                "object": "verification", "model": job["model"], **fields,
                "usage": {"prompt_tokens": n, "completion_tokens": 0, "total_tokens": n}}})
        except websockets.ConnectionClosed:
            pass
        finally:
            del self.jobs[jid]
            if self.ws.open and self.status != "offline":
                await self.presence()
                await self.leave_if_drained()

    async def run(self, job):
        jid, chat, started = job["jobId"], job["kind"] == "chat", time.monotonic()
        words = ["Hello", " from", " Python", "."] * 64
        text, n = "", min(int(job["request"].get("max_tokens") or 16), len(words))
        try:
            for i in range(n):
                await asyncio.sleep(0.005)
                end = "job_cancelled" if self.jobs[jid]["cancelled"] else None
                if (time.monotonic() - started) * 1000 > job["timeoutMs"]: end = "job_timeout"
                if end:
                    return await self.send({"type": "error", "jobId": jid, "code": end, "message": end,
                                            "retryable": end == "job_timeout"})
                text += words[i]
                if job["stream"]:
                    choice = {"index": 0, "delta": {"content": words[i]}} if chat else {"index": 0, "text": words[i]}
                    obj = "chat.completion.chunk" if chat else "text_completion"
                    await self.send({"type": "chunk", "jobId": jid, "seq": i, "tokens": 1, "chunk": {
                        "id": jid, "object": obj, "created": int(time.time()), "model": MODEL,
                        "choices": [{**choice, "finish_reason": None}]}})
            choice = {"message": {"role": "assistant", "content": text}} if chat else {"text": text}
            usage = {"prompt_tokens": 8, "completion_tokens": n, "total_tokens": 8 + n}
            await self.send({"type": "result", "jobId": jid, "response": {
                "id": jid, "object": "chat.completion" if chat else "text_completion", "created": int(time.time()),
                "model": MODEL, "choices": [{"index": 0, **choice, "finish_reason": "length"}], "usage": usage}})
        except websockets.ConnectionClosed:
            pass
        finally:
            del self.jobs[jid]
            if self.ws.open and self.status != "offline":
                await self.presence()  # after the job's end (§8)
                await self.leave_if_drained()


def verify_problem(req):
    """A verify request's first problem, in the order of §9 "Verification": (code, retryable) or None."""
    ids = lambda v: isinstance(v, list) and 0 < len(v) <= 131072 and all(type(t) is int and t >= 0 for t in v)
    top_k, sha = req.get("topK"), req.get("sha256")
    if (not ids(req.get("promptTokenIds")) or not ids(req.get("completionTokenIds"))
            or type(top_k) is not int or not 1 <= top_k <= 100 or (sha is not None and not isinstance(sha, str))
            or ("sampling" in req and not sampling_ok(req["sampling"]))
            or set(req) - {"promptTokenIds", "completionTokenIds", "topK", "sha256", "sampling"}):
        return "invalid_request", False
    if sha is not None and sha != KIT.sha256:
        return "model_not_found", True  # other weights under this id: never score with them
    tokens = req["promptTokenIds"] + req["completionTokenIds"]
    if max(tokens) >= KIT.vocabulary: return "invalid_request", False
    if len(tokens) > KIT.context: return "context_length_exceeded", False
    return None


def sampling_ok(s):
    """A verify job's `sampling` (v0.2, §9 "Sampling"): its members, types and ranges."""
    number = lambda v, lo, hi: type(v) in (int, float) and lo <= v <= hi
    bounds = {"temperature": (0, 2), "topP": (0, 1), "minP": (0, 1), "presencePenalty": (-2, 2),
              "frequencyPenalty": (-2, 2)}
    if not isinstance(s, dict) or set(s) - {*bounds, "topK", "logitBias"} or "temperature" not in s:
        return False
    if not all(number(s[k], *bounds[k]) for k in bounds if k in s):
        return False
    if s.get("topP") == 0 or s.get("minP") == 1:  # top-p in (0, 1], min-p in [0, 1)
        return False
    if "topK" in s and not (type(s["topK"]) is int and 0 <= s["topK"] <= 1_000_000):
        return False
    bias = s.get("logitBias", {})
    return (isinstance(bias, dict) and len(bias) <= 300
            and all(k.isascii() and k.isdigit() and len(k) <= 10 and number(v, -100, 100) for k, v in bias.items()))


async def main(url, key):
    node_id = "0x" + keccak256(key.get_verifying_key().to_string())[-20:].hex()
    delay = 0.05
    while True:  # reconnect after every close; back off while sessions fail before ready (§12)
        session = None
        try:
            async with websockets.connect(url, max_size=None) as ws:
                session = Session(ws, key, node_id)
                await session.send({"type": "hello", "nodeId": node_id, "role": "cpu", "versions": [0],
                                    "software": {"name": "gpumesh-python-example", "version": "0.1"}})
                async for data in ws:
                    session.heard = time.monotonic()
                    try: await session.handle(session.parse(data))
                    except ProtocolError as e: await session.fail(e.code, e.close)
        except (OSError, websockets.WebSocketException):
            pass
        if session:
            for task in session.tasks: task.cancel()
        delay = 0.05 if session and session.phase == "ready" else min(delay * 2, 2.0)
        await asyncio.sleep(delay)


if __name__ == "__main__":
    secret = bytes.fromhex(sys.argv[2].removeprefix("0x")) if len(sys.argv) > 2 else os.urandom(32)
    asyncio.run(main(sys.argv[1], SigningKey.from_string(secret, curve=SECP256k1)))

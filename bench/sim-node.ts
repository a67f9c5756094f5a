/**
 * One simulated node of bench/network-sim.ts: the reference node's session (protocol/src/conformance
 * /reference) without a model — hello, the challenge signed, the manifest and owner proof signed
 * once (sim-identities.ts), presence with load around every job, pings at the welcome's interval,
 * a fixed answer after `jobMs`, drain and bye — cheap enough for thousands in one process: no timer
 * of its own for heartbeats (the fleet walks its nodes, sim-fleet.ts), no model, frames built with
 * the protocol package.
 */
import {
  challengeText,
  createFrame,
  encodeFrame,
  type Frame,
  type FrameOf,
  PROTOCOL_VERSION,
  parseFrame,
  SessionOrder,
} from '@gpumesh/protocol';
import { signMessage } from 'viem/accounts';
import WebSocket from 'ws';
import type { SimIdentity } from './sim-identities.js';

/** What every node of a fleet shares. */
export type SimNodeSettings = {
  /** How long a job runs before its answer, ms. */
  jobMs: number;
  /** Jobs at once; presence says busy at this many. */
  capacity: number;
  /** Called once per session when the coordinator acknowledged the manifest. */
  onReady(node: SimNode): void;
  /** Called when a session ends, whoever ended it; `wasReady`: it had been acknowledged. */
  onClosed(node: SimNode, code: number, wasReady: boolean): void;
};

const REPLY = ['Hello', ' from', ' a', ' simulated', ' node', '.'];

export class SimNode {
  ws: WebSocket | undefined;
  order = new SessionOrder('node');
  ready = false;
  draining = false;
  /** Silent on purpose (a node that vanished without closing): TTL expiry ends it. */
  muted = false;
  inFlight = 0;
  /** Load reported beyond the real jobs (presence churn: the node's own work elsewhere). */
  phantom = 0;
  heartbeatMs = 0;
  nextPingAt = Number.POSITIVE_INFINITY;
  jobs = 0;
  readonly #cancelled = new Set<string>();

  constructor(
    readonly identity: SimIdentity,
    readonly settings: SimNodeSettings,
  ) {}

  /** Opens a new session to `url`. */
  connect(url: string): void {
    this.order = new SessionOrder('node');
    this.ready = false;
    this.draining = false;
    this.muted = false;
    this.inFlight = 0;
    this.phantom = 0;
    this.nextPingAt = Number.POSITIVE_INFINITY;
    const ws = new WebSocket(url, { perMessageDeflate: false });
    this.ws = ws;
    ws.on('open', () =>
      this.send(
        createFrame('hello', {
          nodeId: this.identity.address,
          role: 'gpu',
          versions: [PROTOCOL_VERSION],
          software: { name: 'gpumesh-network-sim', version: '0.0.0' },
        }),
      ),
    );
    ws.on('message', (data, binary) => {
      if (this.ws !== ws || this.muted) return;
      let frame: Frame;
      try {
        frame = parseFrame(data as Buffer, { binary });
        this.order.receive(frame.type);
      } catch {
        return;
      }
      void this.#onFrame(frame);
    });
    ws.on('close', (code) => {
      if (this.ws !== ws) return;
      const wasReady = this.ready;
      this.ws = undefined;
      this.ready = false;
      this.settings.onClosed(this, code, wasReady);
    });
    ws.on('error', () => {});
  }

  send(frame: Frame): void {
    if (this.ws?.readyState === WebSocket.OPEN && !this.muted) this.ws.send(encodeFrame(frame));
  }

  /** Reports status and load (real jobs plus the phantom load). */
  presence(): void {
    const inFlight = Math.min(this.settings.capacity, this.inFlight + this.phantom);
    const status = this.draining ? 'draining' : inFlight >= this.settings.capacity ? 'busy' : 'online';
    this.send(createFrame('presence', { status, load: { inFlight, capacity: this.settings.capacity } }));
  }

  /** A ping when one is due (the fleet calls this for every node on its tick). */
  tick(now: number): void {
    if (!this.ready || now < this.nextPingAt) return;
    this.nextPingAt = now + this.heartbeatMs;
    this.send(createFrame('ping', { ts: now }));
  }

  /** Graceful leave (NODE_PROTOCOL.md §8): draining, in-flight jobs finish, offline, bye, 1000. */
  drain(): void {
    if (!this.ready || this.draining) return;
    this.draining = true;
    this.presence();
    this.#leaveIfDrained();
  }

  /** Abrupt loss: the socket dropped without a word (the coordinator sees the TCP close). */
  vanish(): void {
    this.ws?.terminate();
  }

  /** Silence with the socket open: the coordinator's TTL has to find it. */
  mute(): void {
    this.muted = true;
  }

  async #onFrame(frame: Frame): Promise<void> {
    switch (frame.type) {
      case 'challenge': {
        const signature = await signMessage({
          message: challengeText(frame, this.identity.address),
          privateKey: this.identity.key,
        });
        this.send(createFrame('auth', { signature, owner: this.identity.owner }));
        return;
      }
      case 'welcome':
        this.heartbeatMs = frame.heartbeatIntervalMs;
        this.send(
          createFrame('manifest', { manifest: this.identity.manifest, signature: this.identity.signature }),
        );
        return;
      case 'manifest_ack':
        if (this.ready) return;
        this.ready = true;
        // Spread the pings over the interval, as nodes that connected at random times would.
        this.nextPingAt = Date.now() + Math.random() * this.heartbeatMs;
        this.presence();
        this.settings.onReady(this);
        return;
      case 'ping':
        this.send(createFrame('pong', { ts: frame.ts }));
        return;
      case 'job':
        this.#run(frame);
        return;
      case 'cancel':
        this.#cancelled.add(frame.jobId);
        return;
      case 'drain':
        this.drain();
        return;
      default:
        return;
    }
  }

  #run(job: FrameOf<'job'>): void {
    if (this.draining) {
      this.send(
        createFrame('error', { jobId: job.jobId, code: 'draining', message: 'draining', retryable: true }),
      );
      return;
    }
    this.jobs++;
    this.inFlight++;
    this.presence();
    setTimeout(() => {
      const ws = this.ws;
      if (!ws || this.muted) return; // the session ended meanwhile: the job died with it
      this.#answer(job);
      this.inFlight--;
      this.presence();
      this.#leaveIfDrained();
    }, this.settings.jobMs);
  }

  #answer(job: FrameOf<'job'>): void {
    const max = typeof job.request.max_tokens === 'number' ? job.request.max_tokens : REPLY.length;
    const reply = REPLY.slice(0, Math.max(1, Math.min(max, REPLY.length)));
    const usage = { prompt_tokens: 10, completion_tokens: reply.length, total_tokens: 10 + reply.length };
    if (this.#cancelled.delete(job.jobId)) {
      this.send(
        createFrame('error', {
          jobId: job.jobId,
          code: 'job_cancelled',
          message: 'cancelled',
          retryable: false,
          usage: { prompt_tokens: 10, completion_tokens: 0, total_tokens: 10 },
        }),
      );
      return;
    }
    const id = `chatcmpl-${job.jobId}`;
    const created = Math.floor(Date.now() / 1000);
    if (job.stream) {
      for (const [seq, content] of reply.entries()) {
        this.send(
          createFrame('chunk', {
            jobId: job.jobId,
            seq,
            chunk: {
              id,
              object: 'chat.completion.chunk',
              created,
              model: job.model,
              choices: [
                {
                  index: 0,
                  delta: seq === 0 ? { role: 'assistant', content } : { content },
                  finish_reason: null,
                },
              ],
            },
          }),
        );
      }
    }
    const finish = reply.length < REPLY.length ? 'length' : 'stop';
    this.send(
      createFrame('result', {
        jobId: job.jobId,
        response: {
          id,
          object: 'chat.completion',
          created,
          model: job.model,
          choices: [
            { index: 0, message: { role: 'assistant', content: reply.join('') }, finish_reason: finish },
          ],
          usage,
        },
      }),
    );
  }

  #leaveIfDrained(): void {
    if (!this.draining || this.inFlight > 0) return;
    this.draining = false;
    this.send(
      createFrame('presence', { status: 'offline', load: { inFlight: 0, capacity: this.settings.capacity } }),
    );
    this.send(createFrame('bye', { reason: 'drained' }));
    this.ws?.close(1000, 'drained');
  }
}

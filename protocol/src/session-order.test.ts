import { describe, expect, test } from 'vitest';
import { ProtocolError } from './errors.js';
import { COORDINATOR_FRAME_TYPES, FRAME_TYPES, NODE_FRAME_TYPES } from './messages.js';
import { frameAllowed, SESSION_ORDER, SESSION_PHASES, SessionOrder } from './session-order.js';

describe('frameAllowed', () => {
  test('default', () => {
    expect(frameAllowed('coordinator', 'hello', 'hello')).toBe(true);
    expect(frameAllowed('coordinator', 'hello', 'manifest')).toBe(false);
    expect(frameAllowed('node', 'ready', 'job')).toBe(true);
    expect(frameAllowed('node', 'manifest', 'job')).toBe(false);
    expect(frameAllowed('node', 'hello', 'bye')).toBe(true);
  });

  test('behavior: a receiver only accepts what the other side may send', () => {
    for (const phase of SESSION_PHASES) {
      for (const type of SESSION_ORDER.coordinator[phase]) expect(NODE_FRAME_TYPES).toContain(type);
      for (const type of SESSION_ORDER.node[phase]) expect(COORDINATOR_FRAME_TYPES).toContain(type);
    }
  });
});

/** The error `run` throws (fails the test when it throws none or another kind). */
function thrown(run: () => void): ProtocolError {
  try {
    run();
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

describe('SessionOrder', () => {
  test('default: the node moves through the phases by what it receives', () => {
    const node = new SessionOrder('node');
    expect(node.phase).toBe('hello');
    node.send('hello');
    expect(node.phase).toBe('hello');
    node.receive('challenge');
    expect(node.phase).toBe('auth');
    node.send('auth');
    node.receive('welcome');
    expect(node.phase).toBe('manifest');
    node.send('manifest');
    expect(node.ready).toBe(false);
    node.receive('manifest_ack');
    expect(node.ready).toBe(true);
    node.send('presence');
    node.receive('job');
    node.send('chunk');
    node.send('result');
  });

  test('default: the coordinator moves through the phases by what it sends', () => {
    const coordinator = new SessionOrder('coordinator');
    coordinator.receive('hello');
    coordinator.send('challenge');
    expect(coordinator.phase).toBe('auth');
    coordinator.receive('auth');
    coordinator.send('welcome');
    expect(coordinator.phase).toBe('manifest');
    coordinator.receive('manifest');
    coordinator.send('manifest_ack');
    expect(coordinator.ready).toBe(true);
    coordinator.receive('presence');
    coordinator.send('job');
    coordinator.receive('chunk');
  });

  test('behavior: a manifest again in ready is acknowledged again; the session stays ready', () => {
    const node = new SessionOrder('node');
    const opened = ['challenge', 'welcome', 'manifest_ack', 'manifest_ack'].map((type) =>
      node.receive(type as 'challenge'),
    );
    expect(opened).toEqual([true, true, true, false]);
    expect(node.phase).toBe('ready');
    expect(node.receive('ping')).toBe(false);
  });

  test('behavior: error and bye pass in every phase, both ways, without moving it', () => {
    for (const side of ['node', 'coordinator'] as const) {
      const order = new SessionOrder(side);
      for (const type of ['error', 'bye'] as const) {
        order.receive(type);
        order.send(type);
      }
      expect(order.phase).toBe('hello');
    }
  });

  test('behavior: what one side may send is what the other accepts, in every phase', () => {
    const node = new SessionOrder('node');
    const coordinator = new SessionOrder('coordinator');
    for (const step of ['challenge', 'welcome', 'manifest_ack'] as const) {
      for (const type of FRAME_TYPES) {
        expect(node.maySend(type), `${type} in ${node.phase}`).toBe(coordinator.mayReceive(type));
        expect(coordinator.maySend(type), `${type} in ${node.phase}`).toBe(node.mayReceive(type));
      }
      expect(coordinator.phase).toBe(node.phase);
      coordinator.send(step);
      node.receive(step);
    }
  });

  test('error: a job before manifest_ack is out_of_order (close 4005), and the phase stays', () => {
    const node = new SessionOrder('node');
    node.receive('challenge');
    node.receive('welcome');
    const error = thrown(() => node.receive('job'));
    expect([error.code, error.closeCode, error.retryable]).toEqual(['out_of_order', 4005, false]);
    expect(error.message).toContain('job in phase manifest');
    expect(node.phase).toBe('manifest');
  });

  test('error: a second challenge after the handshake is out_of_order', () => {
    const node = new SessionOrder('node');
    for (const type of ['challenge', 'welcome', 'manifest_ack'] as const) node.receive(type);
    expect(thrown(() => node.receive('challenge')).code).toBe('out_of_order');
    expect(node.ready).toBe(true);
  });

  test('error: welcome before challenge, and a frame of the wrong side, are out_of_order', () => {
    expect(thrown(() => new SessionOrder('node').receive('welcome')).code).toBe('out_of_order');
    expect(thrown(() => new SessionOrder('node').receive('hello')).code).toBe('out_of_order');
    const coordinator = new SessionOrder('coordinator');
    expect(thrown(() => coordinator.receive('challenge')).code).toBe('out_of_order');
    expect(thrown(() => coordinator.receive('presence')).code).toBe('out_of_order');
  });

  test('error: a side may not send what its peer would refuse', () => {
    const node = new SessionOrder('node');
    node.receive('challenge');
    node.receive('welcome');
    expect(node.maySend('presence')).toBe(false);
    expect(thrown(() => node.send('presence')).code).toBe('out_of_order');
    const coordinator = new SessionOrder('coordinator');
    expect(thrown(() => coordinator.send('welcome')).code).toBe('out_of_order');
    expect(coordinator.phase).toBe('hello');
    expect(thrown(() => coordinator.send('job')).code).toBe('out_of_order');
  });
});

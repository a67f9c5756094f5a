/** The peer-RPC messages as @grpc/proto-loader hands them over (PEER_PROTO_OPTIONS). */
export type PeerUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };
export type PeerJobError = { code: string; message: string; retryable: boolean };
export type InferRequest = {
  job_id: string;
  kind: 'chat' | 'completion';
  model: string;
  request_json: string;
  stream: boolean;
  timeout_ms: number;
  node_id: string;
};
export type InferResult = { response_json: string; usage: PeerUsage };
export type InferEvent =
  | { event: 'chunk'; chunk: { seq: number; chunk_json: string; tokens?: number } }
  | { event: 'result'; result: InferResult }
  | { event: 'error'; error: PeerJobError };
export type EmbedRequest = {
  job_id: string;
  model: string;
  request_json: string;
  timeout_ms: number;
  node_id: string;
};
export type EmbedResponse =
  | { outcome: 'result'; result: InferResult }
  | { outcome: 'error'; error: PeerJobError };
export type GetManifestRequest = { node_id: string };
export type SignedManifest = { manifest_json: string; signature: string };
export type PingRequest = { ts: number };
export type PingResponse = { ts: number; server_ts: number; id: string };

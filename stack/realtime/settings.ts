/** The local gateway's limits, from the environment (see docs/configuration.md). */
import { z } from "zod";

const schema = z.object({
  AGORA_REALTIME_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(1).default(10_000),
  AGORA_REALTIME_MAX_CHANNELS_PER_CONNECTION: z.coerce.number().int().min(1).default(100),
  AGORA_REALTIME_MAX_JOINS_PER_SECOND: z.coerce.number().int().min(1).default(100),
  AGORA_REALTIME_MAX_PAYLOAD_BYTES: z.coerce.number().int().min(64).default(262_144),
  AGORA_REALTIME_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(60_000),
});

export interface GatewayLimits {
  connectionsPerIp: number;
  channelsPerConnection: number;
  joinsPerSecond: number;
  payloadBytes: number;
  idleTimeoutMs: number;
}

export function gatewayLimits(env: Record<string, string | undefined>): GatewayLimits {
  const e = schema.parse(env);
  return {
    connectionsPerIp: e.AGORA_REALTIME_MAX_CONNECTIONS_PER_IP,
    channelsPerConnection: e.AGORA_REALTIME_MAX_CHANNELS_PER_CONNECTION,
    joinsPerSecond: e.AGORA_REALTIME_MAX_JOINS_PER_SECOND,
    payloadBytes: e.AGORA_REALTIME_MAX_PAYLOAD_BYTES,
    idleTimeoutMs: e.AGORA_REALTIME_IDLE_TIMEOUT_MS,
  };
}

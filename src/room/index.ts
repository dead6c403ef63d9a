// Public surface of src/room for the UI and the agent's backend.
export { createHostRoom, joinRoom, type HostRoom, type GuestRoom, type HostRoomOptions, type JoinOptions, type EngineKind } from './api.ts';
export { RoomHost, HOST_ID, type HostEvent, type HostOptions, type DeviceInfo } from './host.ts';
export type { TokenRoute } from './host-chains.ts';
export { RoomGuest, type GuestEvent, type GuestOptions, type EngineFactory, type LoadWeightsFn } from './guest.ts';
export { RoomEngine } from './room-engine.ts';
export { dealLayers, dealCost, validateDeal, type DealEntry } from './deal.ts';
export { inviteLink, parseInvite, newRoomId, type SignalingConfig } from './signaling.ts';
export { measureCapabilities } from './capabilities.ts';
export type { DeviceCaps } from './protocol.ts';
export * from './errors.ts';

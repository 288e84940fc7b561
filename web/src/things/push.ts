// This device's Web Push subscription, registered with the server (the contract's
// /v1/pushConfig and /v1/devices); the service worker (public/sw.js) shows what arrives.
import type { Api } from "../api/client";
import { pushKey, registerWebPush } from "./reminders";

export function pushSupported(): boolean {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(base64url.length / 4) * 4, "=");
  const raw = atob(base64);
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

/** Asks the person, subscribes this browser and registers it; false when they said no. */
export async function turnOnPush(api: Api): Promise<boolean> {
  if ((await Notification.requestPermission()) !== "granted") return false;
  const registration = await navigator.serviceWorker.ready;
  const key = await pushKey(api);
  const subscription =
    (await registration.pushManager.getSubscription()) ??
    (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) }));
  await registerWebPush(api, subscription.toJSON());
  return true;
}

// This device's Web Push subscription, registered with the server (the contract's
// /v1/pushConfig and /v1/devices); the service worker (public/sw.js) shows what arrives.
import type { RawCall } from "../api/raw";

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
export async function turnOnPush(call: RawCall): Promise<boolean> {
  if ((await Notification.requestPermission()) !== "granted") return false;
  const registration = await navigator.serviceWorker.ready;
  const { web_push_public_key } = await call<{ web_push_public_key: string }>("GET", "/v1/pushConfig");
  const subscription =
    (await registration.pushManager.getSubscription()) ??
    (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(web_push_public_key) }));
  const json = subscription.toJSON();
  await call("POST", "/v1/devices", {
    kind: "web_push",
    web_push: { endpoint: json.endpoint, keys: { p256dh: json.keys?.p256dh, auth: json.keys?.auth } },
  });
  return true;
}

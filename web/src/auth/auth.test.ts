import { describe, expect, it } from "vitest";
import { firebaseConfig } from "./auth";

describe("firebaseConfig", () => {
  it("signs in with Firebase only when the build was given its config", () => {
    expect(firebaseConfig({})).toBeNull();
    expect(firebaseConfig({ VITE_FIREBASE_PROJECT_ID: "p" })).toBeNull(); // no API key: local
    expect(
      firebaseConfig({
        VITE_FIREBASE_API_KEY: "key",
        VITE_FIREBASE_AUTH_DOMAIN: "p.firebaseapp.com",
        VITE_FIREBASE_PROJECT_ID: "p",
        VITE_FIREBASE_APP_ID: "1:2:web:3",
      }),
    ).toEqual({ apiKey: "key", authDomain: "p.firebaseapp.com", projectId: "p", appId: "1:2:web:3" });
  });
});

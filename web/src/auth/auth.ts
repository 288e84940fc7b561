// Who the user is and the ID token every request carries as `Authorization: Bearer`.
// Locally a dev sign-in asks the local web server to mint a token (scripts/web_serve.py);
// in production Firebase Authentication signs in, configured by the VITE_FIREBASE_* build
// variables. Either way the rest of the app only sees `Session`.

export interface Session {
  user: string;
  token: () => Promise<string>;
  signOut: () => Promise<void>;
}

export interface FirebaseConfig {
  apiKey: string;
  authDomain: string;
  projectId: string;
  appId: string;
}

/** The Firebase config the build was given, or null for the local dev sign-in. */
export function firebaseConfig(env: Record<string, string | undefined>): FirebaseConfig | null {
  const config = {
    apiKey: env.VITE_FIREBASE_API_KEY ?? "",
    authDomain: env.VITE_FIREBASE_AUTH_DOMAIN ?? "",
    projectId: env.VITE_FIREBASE_PROJECT_ID ?? "",
    appId: env.VITE_FIREBASE_APP_ID ?? "",
  };
  return config.apiKey ? config : null;
}

const STORED = "assistant.dev-session";
const REFRESH_MARGIN_MS = 60_000;

interface DevToken {
  user: string;
  token: string;
  expiresAt: number;
}

async function mintDevToken(user: string): Promise<DevToken> {
  const response = await fetch("/dev/token", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ user }),
  });
  const body = (await response.json()) as { token?: string; expires_in?: number; error?: { message?: string } };
  if (!response.ok || !body.token) {
    throw new Error(body.error?.message ?? `the dev sign-in answered ${response.status}`);
  }
  const expiresAt = Date.now() + (body.expires_in ?? 3600) * 1000;
  return { user, token: body.token, expiresAt };
}

function devSession(current: DevToken): Session {
  let held = current;
  return {
    user: held.user,
    async token() {
      if (held.expiresAt - REFRESH_MARGIN_MS < Date.now()) {
        held = await mintDevToken(held.user);
        sessionStorage.setItem(STORED, JSON.stringify(held));
      }
      return held.token;
    },
    async signOut() {
      sessionStorage.removeItem(STORED);
    },
  };
}

/** Local only: the stack's signing key mints a token for the typed user name. */
export async function devSignIn(user: string): Promise<Session> {
  const minted = await mintDevToken(user);
  sessionStorage.setItem(STORED, JSON.stringify(minted));
  return devSession(minted);
}

/** The dev session this tab signed in before a reload, if any. */
export function restoredDevSession(): Session | null {
  const raw = sessionStorage.getItem(STORED);
  if (!raw) return null;
  try {
    return devSession(JSON.parse(raw) as DevToken);
  } catch {
    sessionStorage.removeItem(STORED);
    return null;
  }
}

/** Production: Firebase Authentication (email and password), loaded only when configured. */
export async function firebaseSignIn(config: FirebaseConfig, email: string, password: string): Promise<Session> {
  const [{ initializeApp, getApps }, auth] = await Promise.all([import("firebase/app"), import("firebase/auth")]);
  const app = getApps()[0] ?? initializeApp(config);
  const firebase = auth.getAuth(app);
  const { user } = await auth.signInWithEmailAndPassword(firebase, email, password);
  return {
    user: user.email ?? user.uid,
    token: () => user.getIdToken(), // Firebase refreshes it when it nears expiry
    signOut: () => auth.signOut(firebase),
  };
}

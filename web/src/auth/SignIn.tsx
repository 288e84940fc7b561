import { type FormEvent, useState } from "react";
import { type FirebaseConfig, type Session, devSignIn, firebaseSignIn } from "./auth";

interface Props {
  firebase: FirebaseConfig | null;
  onSignedIn: (session: Session) => void;
}

export function SignIn({ firebase, onSignedIn }: Props) {
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(firebase ? await firebaseSignIn(firebase, name, password) : await devSignIn(name.trim()));
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="sign-in">
      <h1>Assistant</h1>
      <form onSubmit={submit} aria-describedby={firebase ? undefined : "dev-hint"}>
        <label htmlFor="user">{firebase ? "Email" : "User name"}</label>
        <input
          id="user"
          name="user"
          type={firebase ? "email" : "text"}
          autoComplete="username"
          required
          pattern={firebase ? undefined : "[A-Za-z0-9_\\-]{1,64}"}
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        {firebase && (
          <>
            <label htmlFor="password">Password</label>
            <input
              id="password"
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {!firebase && (
          <p id="dev-hint" className="hint">
            Local development: any name (letters, digits, _ or -) signs in as that user.
          </p>
        )}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

import { useMemo, useState } from "react";
import { apiClient } from "./api/client";
import { type Session, firebaseConfig, restoredDevSession } from "./auth/auth";
import { SignIn } from "./auth/SignIn";
import { ChatPage } from "./chat/ChatPage";
import { MemoryPage } from "./memory/MemoryPage";

const FIREBASE = firebaseConfig(import.meta.env as Record<string, string | undefined>);

export function App() {
  const [session, setSession] = useState<Session | null>(() => (FIREBASE ? null : restoredDevSession()));
  const [page, setPage] = useState<"chat" | "memory">("chat");
  const api = useMemo(() => (session ? apiClient(session.token) : null), [session]);

  if (!session || !api) return <SignIn firebase={FIREBASE} onSignedIn={setSession} />;

  const signOut = () => {
    void session.signOut();
    setSession(null);
    setPage("chat");
  };
  return (
    <div className="app">
      <header>
        <nav aria-label="Sections">
          {(["chat", "memory"] as const).map((name) => (
            <button key={name} type="button" aria-current={page === name ? "page" : undefined} onClick={() => setPage(name)}>
              {name === "chat" ? "Chat" : "Memory"}
            </button>
          ))}
        </nav>
        <span className="who">
          {session.user}{" "}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main>
        {page === "chat" ? (
          <ChatPage key={session.user} api={api} />
        ) : (
          <MemoryPage api={api} user={session.user} onDeleted={signOut} />
        )}
      </main>
    </div>
  );
}

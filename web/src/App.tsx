import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { type Api, apiClient, ok } from "./api/client";
import { Drawer } from "./app/Drawer";
import { type Section, SECTIONS, sectionOf } from "./app/sections";
import { type Session, firebaseConfig, restoredDevSession } from "./auth/auth";
import { SignIn } from "./auth/SignIn";
import { ChatPage } from "./chat/ChatPage";
import { useChat } from "./chat/useChat";
import { MemoryPage } from "./memory/MemoryPage";
import { Calendar } from "./things/Calendar";
import { BROWSER_PLACE, type Place } from "./things/format";
import { Inbox, useUnread } from "./things/Inbox";
import { Money } from "./things/Money";
import { Notes } from "./things/Notes";
import { Reminders } from "./things/Reminders";

const FIREBASE = firebaseConfig(import.meta.env as Record<string, string | undefined>);

export function App() {
  const [session, setSession] = useState<Session | null>(() => (FIREBASE ? null : restoredDevSession()));
  const api = useMemo(() => (session ? apiClient(session.token) : null), [session]);
  if (!session || !api) return <SignIn firebase={FIREBASE} onSignedIn={setSession} />;
  const signOut = () => {
    void session.signOut();
    window.location.hash = "";
    setSession(null);
  };
  return <SignedIn key={session.user} session={session} api={api} onSignOut={signOut} />;
}

/** The user's time zone and currency, from the assistant profile (the browser's meanwhile). */
function usePlace(api: Api): Place {
  const [place, setPlace] = useState(BROWSER_PLACE);
  useEffect(() => {
    ok(api.GET("/v1/settings/assistant")).then(
      (p) => setPlace({ timeZone: p.timezone || BROWSER_PLACE.timeZone, currency: p.currency ?? null }),
      () => undefined,
    );
  }, [api]);
  return place;
}

function useSection(): [Section, (s: Section) => void] {
  const [section, setSection] = useState(() => sectionOf(window.location.hash));
  useEffect(() => {
    const follow = () => setSection(sectionOf(window.location.hash));
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  const go = useCallback((s: Section) => {
    window.location.hash = s === "chat" ? "" : s;
    setSection(s);
  }, []);
  return [section, go];
}

function SignedIn({ session, api, onSignOut }: { session: Session; api: Api; onSignOut: () => void }) {
  const chat = useChat(api, new URLSearchParams(window.location.search).get("chat"));
  const place = usePlace(api);
  const unread = useUnread(api);
  const [section, go] = useSection();
  const [drawerOpen, setDrawerOpen] = useState(false);

  useEffect(() => {
    document.title = section === "chat" ? "Assistant" : `${SECTIONS[section]} · Assistant`;
  }, [section]);

  const menu = useRef<HTMLButtonElement>(null);
  const closeDrawer = useCallback(() => {
    setDrawerOpen(false);
    menu.current?.focus(); // back where the keyboard was
  }, []);

  const openChat = (id: string | null) => {
    void chat.open(id);
    go("chat");
    setDrawerOpen(false);
  };

  return (
    <div className="app" data-section={section}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          ref={menu}
          className="icon menu"
          aria-label="Menu"
          aria-expanded={drawerOpen}
          aria-controls="drawer"
          onClick={() => setDrawerOpen(!drawerOpen)}
        >
          <svg aria-hidden="true" viewBox="0 0 24 24" width="24" height="24">
            <path d="M3 6h18M3 12h18M3 18h18" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
          </svg>
          {unread > 0 && <span className="dot" aria-hidden="true" />}
        </button>
        <span className="app-title">{SECTIONS[section]}</span>
        <button type="button" className="icon" aria-label="New chat" onClick={() => openChat(null)}>
          <svg aria-hidden="true" viewBox="0 0 24 24" width="24" height="24">
            <path d="M12 5v14M5 12h14" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
          </svg>
        </button>
      </header>
      <div className="frame">
        <Drawer
          open={drawerOpen}
          onClose={closeDrawer}
          section={section}
          onSection={(s) => {
            go(s);
            setDrawerOpen(false);
          }}
          unread={unread}
          chats={chat.chats}
          chatId={chat.chatId}
          onChat={openChat}
          user={session.user}
          onSignOut={onSignOut}
        />
        <main id="main" tabIndex={-1}>
          {section === "chat" && <ChatPage chat={chat} />}
          {section === "inbox" && <Inbox api={api} place={place} />}
          {section === "reminders" && <Reminders api={api} place={place} />}
          {section === "calendar" && <Calendar api={api} place={place} />}
          {section === "notes" && <Notes api={api} place={place} />}
          {section === "money" && <Money api={api} place={place} />}
          {section === "memory" && <MemoryPage api={api} user={session.user} onDeleted={onSignOut} />}
        </main>
      </div>
    </div>
  );
}

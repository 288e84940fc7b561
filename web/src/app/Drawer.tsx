import { useEffect, useRef } from "react";
import type { Chat } from "../api/client";
import { type Section, SECTIONS } from "./sections";

const WHEN = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });

interface Props {
  open: boolean;
  onClose: () => void;
  section: Section;
  onSection: (s: Section) => void;
  unread: number;
  chats: Chat[];
  chatId: string | null;
  onChat: (id: string | null) => void;
  user: string;
  onSignOut: () => void;
}

/** The sections and the chats: a drawer on a phone (the menu button opens it, Escape or a
 * choice closes it), a sidebar from 640 px. */
export function Drawer({ open, onClose, section, onSection, unread, chats, chatId, onChat, user, onSignOut }: Props) {
  const panel = useRef<HTMLElement>(null);
  // Focus moves in once when it opens, not again when the app re-renders (a poll).
  useEffect(() => {
    if (open) panel.current?.querySelector<HTMLElement>("a, button")?.focus();
  }, [open]);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") onClose();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open, onClose]);

  return (
    <>
      <aside id="drawer" ref={panel} className="drawer" data-open={open}>
        <nav aria-label="Sections">
          <ul>
            {(Object.keys(SECTIONS) as Section[]).map((s) => (
              <li key={s}>
                <a
                  href={s === "chat" ? "#" : `#${s}`}
                  aria-current={section === s ? "page" : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    onSection(s);
                  }}
                >
                  {SECTIONS[s]}
                  {s === "inbox" && unread > 0 && <span className="badge">{unread} new</span>}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <nav className="chat-list" aria-label="Chats">
          <button type="button" className="new-chat" onClick={() => onChat(null)} aria-current={section === "chat" && chatId === null}>
            New chat
          </button>
          <ul>
            {chats.map((c) => (
              <li key={c.id}>
                <button type="button" onClick={() => onChat(c.id)} aria-current={section === "chat" && c.id === chatId}>
                  <span className="chat-title">{c.title || "New chat"}</span>
                  <small className="chat-when">{WHEN.format(new Date(c.updated_at))}</small>
                  {c.question && <span className="badge">question</span>}
                </button>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span>{user}</span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </aside>
      {open && <div className="scrim" aria-hidden="true" onClick={onClose} />}
    </>
  );
}

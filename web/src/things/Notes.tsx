import { type FormEvent, useCallback, useId, useState } from "react";
import { type Api, type ApiFailure, type Schemas, ok } from "../api/client";
import { Failure, useLoad } from "../memory/useLoad";
import { type Place, when } from "./format";

type Note = Schemas["Note"];

/** The user's notes, newest first; a search keeps those with every word. */
export function Notes({ api, place }: { api: Api; place: Place }) {
  const [draft, setDraft] = useState("");
  const [query, setQuery] = useState("");
  const load = useCallback(
    async () => (await ok(api.GET("/v1/notes", { params: { query: { query, page_size: 200 } } }))).notes,
    [api, query],
  );
  const { data, failure, reload, setFailure } = useLoad(load);
  const [status, setStatus] = useState("");

  function search(event: FormEvent) {
    event.preventDefault();
    setQuery(draft.trim());
  }

  async function edit(note: Note, title: string, text: string) {
    try {
      const params = { path: { note: note.id } };
      await ok(api.PATCH("/v1/notes/{note}", { params, body: { title, text, etag: note.etag } }));
      setStatus(`Saved: ${title}`);
    } catch (error) {
      setFailure(error as ApiFailure);
    }
    await reload();
  }

  async function remove(note: Note) {
    try {
      await ok(api.DELETE("/v1/notes/{note}", { params: { path: { note: note.id } } }));
      setStatus(`Deleted: ${note.title}`);
    } catch (error) {
      setFailure(error as ApiFailure);
    }
    await reload();
  }

  return (
    <section className="view" aria-labelledby="notes-title">
      <h1 id="notes-title">Notes</h1>
      <form role="search" className="inline" onSubmit={search}>
        <label htmlFor="note-search" className="visually-hidden">
          Search notes
        </label>
        <input id="note-search" type="search" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="Search notes" maxLength={200} />
        <button type="submit">Search</button>
      </form>
      <p role="status" className="hint">
        {status || (query && data ? `${data.length} found for “${query}”` : "")}
      </p>
      <Failure failure={failure} />
      {data && data.length === 0 && <p className="empty">{query ? "No note has those words." : "No notes yet. Ask in the chat: “note that…”."}</p>}
      <ul className="things">
        {data?.map((n) => (
          <NoteItem key={`${n.id}-${n.etag}`} note={n} place={place} onEdit={(title, text) => void edit(n, title, text)} onDelete={() => void remove(n)} />
        ))}
      </ul>
    </section>
  );
}

interface ItemProps {
  note: Note;
  place: Place;
  onEdit: (title: string, text: string) => void;
  onDelete: () => void;
}

function NoteItem({ note: n, place, onEdit, onDelete }: ItemProps) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(n.title);
  const [text, setText] = useState(n.text);
  const id = useId();

  function save(event: FormEvent) {
    event.preventDefault();
    if (!title.trim() || !text.trim()) return;
    setEditing(false);
    onEdit(title.trim(), text.trim());
  }

  return (
    <li className="thing">
      <p className="thing-title">{n.title}</p>
      <p className="note-text">{n.text}</p>
      <p className="hint">{when(n.created_at, place)}</p>
      <div className="actions">
        <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)} aria-label={`Edit: ${n.title}`}>
          Edit
        </button>
        <button type="button" className="danger" onClick={onDelete} aria-label={`Delete: ${n.title}`}>
          Delete
        </button>
      </div>
      {editing && (
        <form className="stacked" onSubmit={save} aria-label={`Edit “${n.title}”`}>
          <label htmlFor={`${id}-title`}>Title</label>
          <input id={`${id}-title`} value={title} onChange={(e) => setTitle(e.target.value)} maxLength={200} required />
          <label htmlFor={`${id}-text`}>Text</label>
          <textarea id={`${id}-text`} value={text} onChange={(e) => setText(e.target.value)} maxLength={5000} rows={4} required />
          <button type="submit">Save</button>
        </form>
      )}
    </li>
  );
}

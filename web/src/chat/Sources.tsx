import type { ChatMessage } from "../api/client";

/**
 * The web pages a grounded answer rests on, and Google's search suggestions, which Google
 * requires be shown with a grounded answer as given. The suggestions are HTML from the API:
 * they are rendered in a sandboxed frame (no scripts, no access to this page), their links
 * opening in a new tab.
 */
export function Sources({ message }: { message: ChatMessage }) {
  const sources = (message.sources ?? []).filter((s) => s.uri.startsWith("https://"));
  const suggestions = message.search_suggestions_html ?? "";
  if (sources.length === 0 && !suggestions) return null;
  return (
    <aside className="sources" aria-label="Sources">
      {sources.length > 0 && (
        <ol>
          {sources.map((source) => (
            <li key={source.uri}>
              <a href={source.uri} target="_blank" rel="noopener noreferrer">
                {source.title || source.uri}
              </a>
            </li>
          ))}
        </ol>
      )}
      {suggestions && (
        <iframe
          className="search-suggestions"
          title="Google Search suggestions"
          sandbox="allow-popups allow-popups-to-escape-sandbox"
          srcDoc={`<base target="_blank">${suggestions}`}
          style={{ border: 0, width: "100%", height: "4.5rem" }}
        />
      )}
    </aside>
  );
}

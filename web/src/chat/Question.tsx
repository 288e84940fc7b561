import { type FormEvent, useId, useState } from "react";
import type { Interrupt } from "../api/client";
import { plain } from "../words";

// Options whose answer is the user's own words, not the option's id.
const NEEDS_WORDS: Record<string, string> = {
  edit: "What should I do instead?",
  answer: "Your answer",
};

export const KIND_TITLES: Record<Interrupt["kind"], string> = {
  disambiguation: "Who do you mean?",
  approval: "May I go ahead?",
  fact_conflict: "Which is right?",
  clarification: "A question",
};

interface Props {
  question: Interrupt;
  disabled: boolean;
  onAnswer: (answer: string, shown: string) => void;
}

/** The open question with its options as buttons; words where an option asks for them. */
export function Question({ question, disabled, onAnswer }: Props) {
  const [wordsFor, setWordsFor] = useState<string | null>(null);
  const [words, setWords] = useState("");
  const titleId = useId();
  const inputId = useId();

  function submitWords(event: FormEvent) {
    event.preventDefault();
    if (words.trim()) onAnswer(words.trim(), words.trim());
  }

  return (
    <section className="question" aria-labelledby={titleId} data-kind={question.kind}>
      <h2 id={titleId}>{KIND_TITLES[question.kind]}</h2>
      <p className="question-text">{plain(question.question)}</p>
      <div className="options" role="group" aria-label="Answers">
        {question.options.map((option) => (
          <button
            key={option.id}
            type="button"
            disabled={disabled}
            aria-pressed={wordsFor === option.id}
            onClick={() => (NEEDS_WORDS[option.id] ? setWordsFor(option.id) : onAnswer(option.id, option.label))}
          >
            {plain(option.label)}
          </button>
        ))}
      </div>
      {wordsFor && (
        <form className="words" onSubmit={submitWords}>
          <label htmlFor={inputId}>{NEEDS_WORDS[wordsFor]}</label>
          <input id={inputId} value={words} onChange={(e) => setWords(e.target.value)} required autoFocus />
          <button type="submit" disabled={disabled}>
            Send answer
          </button>
        </form>
      )}
    </section>
  );
}

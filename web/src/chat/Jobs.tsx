import { type JobAction, actionsFor } from "./messages";
import type { JobView } from "./jobs";
import { agentWords, jobState, plain } from "../words";

const LABELS: Record<JobAction, string> = {
  pause: "Pause",
  resume: "Resume",
  cancel: "Cancel",
  takeover: "Take over",
};

interface Props {
  jobs: JobView[];
  finished: Set<string>;
  onControl: (job: string, action: JobAction) => void;
}

/** The chat's tasks (agent jobs): their state and the controls it allows. Progress and results
 * arrive as chat messages (the poll). */
export function Jobs({ jobs, finished, onControl }: Props) {
  return (
    <section className="jobs" aria-labelledby="jobs-title">
      <h2 id="jobs-title">Tasks</h2>
      <ul>
        {jobs.map((job) => {
          const status = finished.has(job.id) ? "done" : job.status;
          const name = job.goal ? `“${plain(job.goal)}”` : "this task";
          return (
            <li key={job.id} data-job={job.id}>
              <span>
                {name}: <strong className="job-status">{jobState(status)}</strong>
              </span>
              <span className="job-actions">
                {actionsFor(status).map((action) => (
                  <button
                    key={action}
                    type="button"
                    aria-label={`${LABELS[action]} ${name}`}
                    onClick={() => onControl(job.id, action)}
                  >
                    {LABELS[action]}
                  </button>
                ))}
              </span>
              {job.context && (
                <details>
                  <summary>What was done so far</summary>
                  <ul>
                    {job.context.subtasks.map((subtask) => (
                      <li key={subtask.id}>
                        {plain(subtask.goal)} ({agentWords(subtask.agent)}, {jobState(subtask.status)})
                        {subtask.result && <> — {plain(subtask.result)}</>}
                        {subtask.pending && <> — waiting for you</>}
                      </li>
                    ))}
                  </ul>
                </details>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

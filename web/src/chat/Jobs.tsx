import { type JobAction, actionsFor } from "./messages";
import type { JobView } from "./jobs";

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

/** The chat's agent jobs: their state and the controls it allows. Progress and results
 * arrive as chat messages (the poll). */
export function Jobs({ jobs, finished, onControl }: Props) {
  return (
    <section className="jobs" aria-labelledby="jobs-title">
      <h2 id="jobs-title">Agent jobs</h2>
      <ul>
        {jobs.map((job) => {
          const status = finished.has(job.id) ? "done" : job.status;
          const name = job.goal ? `job “${job.goal}”` : `job ${job.id.slice(0, 8)}`;
          return (
            <li key={job.id} data-job={job.id}>
              <span>
                {name}: <strong className="job-status">{status}</strong>
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
                  <summary>What the job had done</summary>
                  <ul>
                    {job.context.subtasks.map((subtask) => (
                      <li key={subtask.id}>
                        {subtask.agent}: {subtask.goal} ({subtask.status})
                        {subtask.result && <> — {subtask.result}</>}
                        {subtask.pending && <> — waiting on {subtask.pending}</>}
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

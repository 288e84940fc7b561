// The chat's agent jobs as the server lists them (`GET /v1/jobs`: the user's active and recent
// jobs, whichever device started them), and the user's controls over one.
import { type Api, type Job, type Schemas, ok } from "../api/client";
import type { JobAction, JobStatus } from "./messages";

export interface JobView {
  id: string;
  status: JobStatus;
  goal: string;
  context?: Schemas["JobContext"];
}

const PAGE = 100;

function view(job: Job): JobView {
  return { id: job.id, status: job.status as JobStatus, goal: job.goal };
}

/** The chat's jobs, newest first: every page of the user's jobs, kept to this chat's. */
export async function chatJobs(api: Api, chat: string): Promise<JobView[]> {
  const found: Job[] = [];
  let token = "";
  do {
    const query = { page_size: PAGE, ...(token ? { page_token: token } : {}) };
    const page = await ok(api.GET("/v1/jobs", { params: { query } }));
    found.push(...page.jobs);
    token = page.next_page_token;
  } while (token);
  return found.filter((job) => job.chat_id === chat).map(view);
}

/** Pauses, resumes, cancels or takes over a job; its new state. */
export async function controlJob(api: Api, job: string, action: JobAction): Promise<Partial<JobView>> {
  const params = { params: { path: { job } } };
  switch (action) {
    case "takeover":
      return { status: "cancelled", context: await ok(api.POST("/v1/jobs/{job}:takeover", params)) };
    case "pause":
      return view(await ok(api.POST("/v1/jobs/{job}:pause", params)));
    case "resume":
      return view(await ok(api.POST("/v1/jobs/{job}:resume", params)));
    case "cancel":
      return view(await ok(api.POST("/v1/jobs/{job}:cancel", params)));
  }
}

/** One job changed: the list with it replaced. */
export function withJob(jobs: JobView[], job: string, change: Partial<JobView>): JobView[] {
  return jobs.map((j) => (j.id === job ? { ...j, ...change } : j));
}

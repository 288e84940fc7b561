// The chat's agent jobs as this browser knows them (the turn's response names the jobs it
// started; the contract has no list of a chat's jobs), kept per user and chat.
import { type Api, type Schemas, ok } from "../api/client";
import type { JobAction, JobStatus } from "./messages";

export interface JobView {
  id: string;
  status: JobStatus;
  context?: Schemas["JobContext"];
}

const key = (user: string, chat: string) => `assistant.jobs.${user}.${chat}`;

export function storedJobs(user: string, chat: string | null): JobView[] {
  if (!chat) return [];
  try {
    return JSON.parse(localStorage.getItem(key(user, chat)) ?? "[]") as JobView[];
  } catch {
    return [];
  }
}

/** Adds the jobs a reply started; returns the chat's jobs. */
export function addJobs(user: string, chat: string, ids: string[]): JobView[] {
  const known = storedJobs(user, chat);
  const added = ids.filter((id) => !known.some((j) => j.id === id));
  const jobs = [...known, ...added.map((id): JobView => ({ id, status: "running" }))];
  localStorage.setItem(key(user, chat), JSON.stringify(jobs));
  return jobs;
}

/** Changes one job; returns the chat's jobs. */
export function updateJob(user: string, chat: string, job: string, change: Partial<JobView>): JobView[] {
  const jobs = storedJobs(user, chat).map((j) => (j.id === job ? { ...j, ...change } : j));
  localStorage.setItem(key(user, chat), JSON.stringify(jobs));
  return jobs;
}

/** Asks the resume function to pause, resume, cancel or take over a job; its new state. */
export async function controlJob(api: Api, job: string, action: JobAction): Promise<Partial<JobView>> {
  const body = { body: { job_id: job } };
  switch (action) {
    case "takeover":
      return { status: "cancelled", context: await ok(api.POST("/jobs/takeover", body)) };
    case "pause":
      return { status: (await ok(api.POST("/jobs/pause", body))).status as JobStatus };
    case "resume":
      return { status: (await ok(api.POST("/jobs/resume", body))).status as JobStatus };
    case "cancel":
      return { status: (await ok(api.POST("/jobs/cancel", body))).status as JobStatus };
  }
}

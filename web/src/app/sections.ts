// The app's sections, addressed by the URL's hash ("/#reminders"), so a notification's link
// and the back button both land on the right one.
export const SECTIONS = {
  chat: "Chat",
  inbox: "Inbox",
  reminders: "Reminders",
  calendar: "Calendar",
  notes: "Notes",
  money: "Money",
  memory: "Memory & settings",
} as const;

export type Section = keyof typeof SECTIONS;

export function sectionOf(hash: string): Section {
  const name = hash.replace(/^#/, "");
  return name in SECTIONS ? (name as Section) : "chat";
}

import { useCallback, useState } from "react";
import { type Api, ok } from "../api/client";
import { Account } from "./Account";
import { Facts } from "./Facts";
import { NotificationSettings } from "./NotificationSettings";
import { Pending } from "./Pending";
import { Persons } from "./Persons";
import { AssistantProfile, HitlSettings } from "./Settings";
import { Failure, useLoad } from "./useLoad";

/** What the assistant remembers and how it behaves, under the user's control. */
export function MemoryPage({ api, user, onDeleted }: { api: Api; user: string; onDeleted: () => void }) {
  const [version, setVersion] = useState(0);
  const load = useCallback(async () => {
    void version; // a change anywhere reloads the people and the facts
    return (await ok(api.GET("/v1/persons", { params: { query: { page_size: 500 } } }))).persons;
  }, [api, version]);
  const { data: persons, failure } = useLoad(load);
  const changed = () => setVersion((v) => v + 1);
  return (
    <div className="memory-page">
      <Failure failure={failure} />
      <Pending api={api} onChange={changed} />
      <Persons api={api} persons={persons ?? []} onChange={changed} />
      <Facts api={api} persons={persons ?? []} version={version} />
      <AssistantProfile api={api} />
      <HitlSettings api={api} />
      <NotificationSettings api={api} />
      <Account api={api} user={user} onDeleted={onDeleted} />
    </div>
  );
}

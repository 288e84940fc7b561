import { useCallback, useState } from "react";
import { type Api, type ApiFailure, type Schemas, ok } from "../api/client";
import { Failure, useLoad } from "../memory/useLoad";
import { type Place, addMonths, currentMonth, money, monthName, when } from "./format";

type Expense = Schemas["Expense"];
type Budget = Schemas["Budget"];

interface Category {
  name: string;
  currency: string;
  spent: number;
  budget: Budget | null;
}

/** Spending per category and currency, with the category's budget when one is set. */
export function categories(expenses: Expense[], budgets: Budget[]): Category[] {
  const found = new Map<string, Category>();
  for (const e of expenses) {
    const key = `${e.category}\u0000${e.currency}`;
    const budget = budgets.find((b) => b.category === e.category && b.currency === e.currency) ?? null;
    const entry = found.get(key) ?? { name: e.category, currency: e.currency, spent: 0, budget };
    entry.spent += e.amount_minor;
    found.set(key, entry);
  }
  for (const b of budgets) {
    const key = `${b.category}\u0000${b.currency}`;
    if (!found.has(key)) found.set(key, { name: b.category, currency: b.currency, spent: 0, budget: b });
  }
  return [...found.values()].sort((a, b) => b.spent - a.spent || a.name.localeCompare(b.name));
}

/** The user's expenses of a month, by category, against their budgets. */
export function Money({ api, place }: { api: Api; place: Place }) {
  const [month, setMonth] = useState(() => currentMonth(place));
  const load = useCallback(async () => {
    const query = { month, time_zone: place.timeZone, page_size: 500 };
    const [expenses, budgets] = await Promise.all([
      ok(api.GET("/v1/expenses", { params: { query } })),
      ok(api.GET("/v1/budgets", { params: { query: { page_size: 500 } } })),
    ]);
    return { expenses: expenses.expenses, budgets: budgets.budgets };
  }, [api, month, place.timeZone]);
  const { data, failure, reload, setFailure } = useLoad(load);
  const [status, setStatus] = useState("");

  async function remove(expense: Expense) {
    try {
      await ok(api.DELETE("/v1/expenses/{expense}", { params: { path: { expense: expense.id } } }));
      setStatus(`Deleted: ${money(expense.amount_minor, expense.currency)} ${expense.category}`);
    } catch (error) {
      setFailure(error as ApiFailure);
    }
    await reload();
  }

  const rows = data ? categories(data.expenses, data.budgets) : [];
  return (
    <section className="view" aria-labelledby="money-title">
      <h1 id="money-title">Money</h1>
      <div className="toolbar">
        <button type="button" onClick={() => setMonth(addMonths(month, -1))} aria-label="Previous month">
          ‹
        </button>
        <h2 className="month">{monthName(month)}</h2>
        <button type="button" onClick={() => setMonth(addMonths(month, 1))} aria-label="Next month">
          ›
        </button>
      </div>
      <p role="status" className="hint">
        {status}
      </p>
      <Failure failure={failure} />
      {data && rows.length === 0 && <p className="empty">No expenses this month. Tell the chat: “I spent 12 francs on lunch”.</p>}
      {rows.length > 0 && (
        <ul className="things" aria-label="By category">
          {rows.map((c) => (
            <li key={`${c.name}-${c.currency}`} className="thing">
              <p className="thing-title">
                {c.name}: {money(c.spent, c.currency)}
              </p>
              {c.budget && (
                <>
                  <meter min={0} max={c.budget.monthly_limit_minor} value={Math.min(c.spent, c.budget.monthly_limit_minor)} aria-label={`${c.name} of its budget`} />
                  <p className="hint">
                    {c.spent > c.budget.monthly_limit_minor
                      ? `${money(c.spent - c.budget.monthly_limit_minor, c.currency)} over the budget of ${money(c.budget.monthly_limit_minor, c.currency)}`
                      : `${money(c.budget.monthly_limit_minor - c.spent, c.currency)} left of ${money(c.budget.monthly_limit_minor, c.currency)}`}
                  </p>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {data && data.expenses.length > 0 && (
        <>
          <h2>Expenses</h2>
          <ul className="things">
            {data.expenses.map((e) => (
              <li key={e.id} className="thing">
                <p className="thing-title">
                  {money(e.amount_minor, e.currency)} · {e.category}
                </p>
                <p className="hint">
                  {e.description ? `${e.description} · ` : ""}
                  {when(e.spent_at, place)}
                </p>
                <div className="actions">
                  <button type="button" className="danger" onClick={() => void remove(e)} aria-label={`Delete: ${money(e.amount_minor, e.currency)} ${e.category}`}>
                    Delete
                  </button>
                </div>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

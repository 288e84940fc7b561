"""Wealth tools: monthly budgets per category, expenses, the month's summary, and what was
spent over any days (``spending_total``: totals per currency as recorded, for "how much did
I spend this week").

Every figure is computed here, in integer minor units, never by the model: the summary adds
the month's expenses per category and sets them against the category's budget. Months are
the user's (their profile's time zone). Amounts in another currency than the summary's are
totalled apart, never converted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from pydantic import AwareDatetime, Field, model_validator

from shared.agents.spec import ToolContext, ToolRefused
from shared.agents.tools.common import MONTH_PATTERN, ToolBase, month_window, result, user_zone
from shared.models.agent_data import MAX_PAGE, Budget, Category, Expense, ShortText
from shared.models.base import Strict
from shared.models.money import MAX_MINOR, Currency, format_amount, to_minor

Amount = Decimal  # "12.30" (decimal text is exact; a JSON number is read as its text)
MAX_AMOUNT = Decimal(MAX_MINOR) / 1000  # checked again in minor units by to_minor
FUTURE_GRACE = timedelta(days=1)
LONGEST_SPAN = timedelta(days=3660)


class SetBudgetArgs(Strict):
    category: Category
    currency: Currency
    monthly_limit: Amount = Field(ge=0, le=MAX_AMOUNT)

    @model_validator(mode="after")
    def _exact(self) -> SetBudgetArgs:
        to_minor(self.monthly_limit, self.currency)  # no more decimals than it has
        return self


class GetBudgetArgs(Strict):
    category: Category | None = None  # None: every budget


class RecordExpenseArgs(Strict):
    amount: Amount = Field(gt=0, le=MAX_AMOUNT)
    currency: Currency
    category: Category
    description: ShortText | None = None
    spent_at: AwareDatetime | None = None  # None: now

    @model_validator(mode="after")
    def _exact(self) -> RecordExpenseArgs:
        to_minor(self.amount, self.currency)
        return self


class ListExpensesArgs(Strict):
    month: str = Field(pattern=MONTH_PATTERN)  # YYYY-MM, in the user's time zone
    category: Category | None = None
    limit: int = Field(default=50, ge=1, le=100)


class SpendingTotalArgs(Strict):
    first_day: date  # in the user's time zone
    last_day: date  # included
    category: Category | None = None
    period: str | None = Field(default=None, max_length=60)  # "this week": said back

    @model_validator(mode="after")
    def _ordered(self) -> SpendingTotalArgs:
        if not timedelta(0) <= self.last_day - self.first_day <= LONGEST_SPAN:
            raise ValueError("last_day must follow first_day, at most ten years later")
        return self


class MonthSummaryArgs(Strict):
    month: str = Field(pattern=MONTH_PATTERN)
    currency: Currency


def _budget_view(budget: Budget) -> dict[str, Any]:
    return {
        "category": budget.category,
        "currency": budget.currency,
        "monthly_limit": format_amount(budget.monthly_limit_minor, budget.currency),
    }


def _expense_view(expense: Expense) -> dict[str, Any]:
    return {
        "id": expense.id,
        "amount": format_amount(expense.amount_minor, expense.currency),
        "currency": expense.currency,
        "category": expense.category,
        "description": expense.description,
        "spent_at": expense.spent_at,
    }


class SetBudget(ToolBase[SetBudgetArgs]):
    name = "budget_set"
    description = "Set the monthly budget of a spending category (replaces the earlier one)."
    args_schema = SetBudgetArgs
    acts = True

    def call(self, context: ToolContext, args: SetBudgetArgs) -> str:
        budget = Budget(
            category=args.category,
            currency=args.currency,
            monthly_limit_minor=to_minor(args.monthly_limit, args.currency),
            updated_at=context.ports.clock.now(),
        )
        context.ports.agent_data.put_budget(context.user_id, budget)
        return result(budget=_budget_view(budget))


class GetBudget(ToolBase[GetBudgetArgs]):
    name = "budget_get"
    description = "Read the monthly budget of a category, or every budget without one."
    args_schema = GetBudgetArgs

    def call(self, context: ToolContext, args: GetBudgetArgs) -> str:
        store = context.ports.agent_data
        if args.category is None:
            budgets = store.list_budgets(context.user_id, 100)
        else:
            found = store.get_budget(context.user_id, args.category)
            budgets = [found] if found is not None else []
        return result(budgets=[_budget_view(b) for b in budgets])


class RecordExpense(ToolBase[RecordExpenseArgs]):
    name = "expense_record"
    description = "Record an expense: amount (decimal text), ISO currency, category, when."
    args_schema = RecordExpenseArgs
    acts = True

    def call(self, context: ToolContext, args: RecordExpenseArgs) -> str:
        now = context.ports.clock.now()
        spent_at = args.spent_at or now
        if spent_at > now + FUTURE_GRACE:
            raise ToolRefused("expense_record: spent_at is in the future")
        expense = Expense(
            id=context.record_id("expense"),
            amount_minor=to_minor(args.amount, args.currency),
            currency=args.currency,
            category=args.category,
            description=args.description,
            spent_at=spent_at,
            created_at=now,
        )
        context.ports.agent_data.put_expense(context.user_id, expense)
        return result(expense=_expense_view(expense))


class ListExpenses(ToolBase[ListExpensesArgs]):
    name = "expense_list"
    description = "List the user's expenses of a month (YYYY-MM), optionally of one category."
    args_schema = ListExpensesArgs

    def call(self, context: ToolContext, args: ListExpensesArgs) -> str:
        start, end = month_window(args.month, user_zone(context))
        month = context.ports.agent_data.list_expenses(context.user_id, start, end, MAX_PAGE)
        chosen = [e for e in month if args.category in (None, e.category)]
        return result(
            expenses=[_expense_view(e) for e in chosen[: args.limit]],
            more=len(chosen) > args.limit or len(month) >= MAX_PAGE,
        )


class SpendingTotal(ToolBase[SpendingTotalArgs]):
    name = "spending_total"
    description = (
        "What the user spent from first_day to last_day (ISO dates, included), optionally in "
        "one category: the count and the total per currency, never converted."
    )
    args_schema = SpendingTotalArgs

    def call(self, context: ToolContext, args: SpendingTotalArgs) -> str:
        zone = user_zone(context)
        start = datetime.combine(args.first_day, datetime.min.time(), tzinfo=zone)
        end = datetime.combine(args.last_day + timedelta(days=1), datetime.min.time(), tzinfo=zone)
        found = context.ports.agent_data.list_expenses(context.user_id, start, end, MAX_PAGE)
        chosen = [e for e in found if args.category is None or _same(args.category, e.category)]
        totals: dict[str, int] = defaultdict(int)
        for expense in chosen:
            totals[expense.currency] += expense.amount_minor
        return result(
            first_day=args.first_day.isoformat(),
            last_day=args.last_day.isoformat(),
            period=args.period,
            category=args.category,
            count=len(chosen),
            totals={c: format_amount(a, c) for c, a in sorted(totals.items())},
            truncated=len(found) >= MAX_PAGE,
        )


def _same(asked: str, recorded: str) -> bool:
    """ "restaurants" asks for "restaurant", "groceries" for "grocery"."""
    return _singular(asked) == _singular(recorded)


def _singular(category: str) -> str:
    if category.endswith("ies"):
        return category[:-3] + "y"
    return category[:-1] if category.endswith("s") and not category.endswith("ss") else category


class MonthSummary(ToolBase[MonthSummaryArgs]):
    name = "month_summary"
    description = "The month's spending per category against its budget, with totals."
    args_schema = MonthSummaryArgs

    def call(self, context: ToolContext, args: MonthSummaryArgs) -> str:
        store = context.ports.agent_data
        start, end = month_window(args.month, user_zone(context))
        expenses = store.list_expenses(context.user_id, start, end, MAX_PAGE)
        budgets = store.list_budgets(context.user_id, MAX_PAGE)
        summary = month_summary(expenses, budgets, args.currency)
        return result(month=args.month, **summary, truncated=len(expenses) >= MAX_PAGE)


def month_summary(
    expenses: Sequence[Expense], budgets: Sequence[Budget], currency: str
) -> dict[str, Any]:
    """Totals per category in ``currency`` against the budgets in it (a pure function)."""
    spent: dict[str, int] = defaultdict(int)
    other: dict[str, int] = defaultdict(int)
    for expense in expenses:
        if expense.currency == currency:
            spent[expense.category] += expense.amount_minor
        else:
            other[expense.currency] += expense.amount_minor
    limits = {b.category: b.monthly_limit_minor for b in budgets if b.currency == currency}
    rows = [
        _row(category, spent.get(category, 0), limits.get(category), currency)
        for category in sorted(spent.keys() | limits.keys())
    ]
    total_spent, total_budget = sum(spent.values()), sum(limits.values())
    unbudgeted = sum(amount for category, amount in spent.items() if category not in limits)
    return {
        "currency": currency,
        "categories": rows,
        "total_spent": format_amount(total_spent, currency),
        "total_budget": format_amount(total_budget, currency),
        "unbudgeted_spent": format_amount(unbudgeted, currency),
        "over_budget": [row["category"] for row in rows if row["over_budget"]],
        "other_currencies": {c: format_amount(a, c) for c, a in sorted(other.items())},
    }


def _row(category: str, spent: int, limit: int | None, currency: str) -> dict[str, Any]:
    used = str((Decimal(spent) * 100 / Decimal(limit)).quantize(Decimal("0.1"))) if limit else None
    return {
        "category": category,
        "spent": format_amount(spent, currency),
        "budget": format_amount(limit, currency) if limit is not None else None,
        "remaining": format_amount(limit - spent, currency) if limit is not None else None,
        "used_percent": used,
        "over_budget": limit is not None and spent > limit,
    }

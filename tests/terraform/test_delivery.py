"""What the code expects of the deployment: the queue and the push subscription present the
OIDC token the functions check, Pub/Sub gives up after the same 5 attempts as the local stack,
Firestore expires what the adapters mark with expire_at, PostgreSQL admits IAM logins."""

from __future__ import annotations

import re
from typing import Any

from scripts.stacklib.pubsub_setup import MAX_DELIVERY_ATTEMPTS
from scripts.stacklib.scheduler import JOBS
from tests.terraform.tfconfig import ROOT, load

SETTINGS: dict[str, Any] = load().locals["settings"]


def test_extraction_tasks_carry_the_token_extraction_checks() -> None:
    queue = load().block("google_cloud_tasks_queue.extraction")
    token = queue.first("http_target")["oidc_token"][0]
    assert token["audience"] == SETTINGS["EXTRACTION_URL"] == "${local.function_urls.extraction}"
    assert token["service_account_email"] == SETTINGS["TASKS_INVOKER_EMAIL"]
    assert queue.first("retry_config")["max_attempts"] == "${var.extraction_queue.max_attempts}"
    assert SETTINGS["EXTRACTION_QUEUE"] == "${google_cloud_tasks_queue.extraction.name}"


def test_agent_jobs_are_pushed_with_the_token_agents_checks() -> None:
    subscription = load().block("google_pubsub_subscription.agent_jobs_push")
    push = subscription.first("push_config")
    token = push["oidc_token"][0]
    assert token["audience"] == SETTINGS["AGENTS_URL"] == "${local.function_urls.agents}"
    assert token["service_account_email"] == SETTINGS["AGENTS_INVOKER_EMAIL"]
    # The path lets functions-framework turn the push body into the CloudEvent agents takes.
    assert push["push_endpoint"].startswith("${local.function_urls.agents}/projects/")
    assert SETTINGS["AGENTS_TOPIC"] == "${google_pubsub_topic.agent_jobs.name}"


def test_dead_letter_after_as_many_attempts_as_locally() -> None:
    subscription = load().block("google_pubsub_subscription.agent_jobs_push")
    policy = subscription.first("dead_letter_policy")
    assert policy["max_delivery_attempts"] == MAX_DELIVERY_ATTEMPTS == 5
    assert policy["dead_letter_topic"] == "${google_pubsub_topic.agent_jobs_dead_letter.id}"


def test_agents_finishes_within_the_push_deadline() -> None:
    tf = load()
    ack_deadline = tf.block("google_pubsub_subscription.agent_jobs_push").body[
        "ack_deadline_seconds"
    ]
    assert tf.locals["functions"]["agents"]["timeout_seconds"] < ack_deadline


def test_firestore_expires_what_the_adapters_mark() -> None:
    tf = load()
    ttl = tf.block("google_firestore_field.expire_at")
    assert ttl.body["field"] == "expire_at" and "ttl_config" in ttl.body
    collections = tf.evaluate(tf.locals["ttl_collections"], "prod")
    assert {"turns", "idempotency", "checkpoints", "checkpoint_chunks"} <= set(collections)
    adapters = ROOT / "shared" / "adapters"
    for source, collection in (
        ("firestore_turn_outbox.py firestore_turns.py", '"turns"'),
        ("firestore_idempotency.py", '"idempotency"'),
        ("firestore_checkpoints.py", '"checkpoints"'),
        ("firestore_checkpoints.py", '"checkpoint_chunks"'),
    ):
        text = "".join((adapters / name).read_text() for name in source.split())
        assert collection in text and '"expire_at"' in text, source


def test_postgres_is_private_with_iam_logins_and_backups() -> None:
    tf = load()
    settings = tf.block("google_sql_database_instance.main").first("settings")
    flags = {flag["name"]: flag["value"] for flag in settings["database_flags"]}
    assert flags["cloudsql.iam_authentication"] == "on"
    assert settings["ip_configuration"][0]["ipv4_enabled"] is False
    assert settings["backup_configuration"][0]["enabled"] is True
    assert tf.environments["prod"]["db_point_in_time_recovery"] is True
    migration = (ROOT / "shared" / "migrations" / "0001_init.sql").read_text()
    assert "CREATE EXTENSION IF NOT EXISTS vector" in migration


def test_the_expiry_job_reaches_extraction_with_the_token_it_checks() -> None:
    job = load().block("google_cloud_scheduler_job.fact_expiry")
    target = job.first("http_target")
    token = target["oidc_token"][0]
    assert target["http_method"] == "POST"
    assert target["uri"] == "${local.function_urls.extraction}/expire"
    assert token["audience"] == SETTINGS["EXTRACTION_URL"]
    assert token["service_account_email"] == SETTINGS["TASKS_INVOKER_EMAIL"]
    # the path the job posts to is the one extraction routes to the expiry job
    assert (
        'request.path.rstrip("/") == "/expire"'
        in (ROOT / "functions" / "extraction" / "main.py").read_text()
    )


def test_the_dev_stack_plays_every_scheduler_job_terraform_deploys() -> None:
    """Each job's function, path and token audience as terraform sets them, so ``make dev``
    runs what production runs (its cadence may be shorter; the sweep's is)."""
    deployed = set()
    for job in load().of_type("google_cloud_scheduler_job"):
        target = job.first("http_target")
        match = re.fullmatch(r"\$\{local\.function_urls\.(\w+)\}(/[\w/]*)", target["uri"])
        assert match, target["uri"]
        token = target["oidc_token"][0]
        assert token["service_account_email"] == SETTINGS["TASKS_INVOKER_EMAIL"]
        on_function = token["audience"] == target["uri"].removesuffix(match[2])
        assert on_function or token["audience"] == target["uri"]
        deployed.add((match[1], match[2], on_function))
    played = {(job.function, job.path, job.audience_is_function) for job in JOBS}
    assert played == deployed

"""The CPU one attacking request costs the web worker before it is refused or queued: each heavy answer
family of ``tools.cost_probe`` (100 KB, and two at 400 KB) sent to ``POST /api/v1/audits`` in this
process (Django test client, a fresh SQLite file under var/admission_probe/, the task queue not run),
first with the user's queue free (202, or 413), then with it full (429). Prints one line per request
(status, wall and CPU seconds) and a last JSON line. A figure, never a test.

    python -m tools.admission_probe
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    folder = ROOT / "var" / "admission_probe"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("db.sqlite3*"):
        stale.unlink()
    os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'db.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "theoria.settings.base")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    setup_test_environment()
    call_command("migrate", verbosity=0)
    settings.THEORIA["THROTTLE_AUDITS"] = ""
    from django.contrib.auth.models import Group, User
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from audit import roles
    from audit.models import BackgroundJob, UserProfile
    from audit.services import audit_queue, background
    from audit.services.workspaces import workspace_get_default
    from tools.cost_probe import families

    audit_queue.background_job_enqueue = lambda job_id: None  # the jobs stay queued
    background.background_job_enqueue = audit_queue.background_job_enqueue
    workspace = workspace_get_default()
    user = User.objects.create_user("attacker")
    user.groups.add(Group.objects.get(name=roles.ADMIN))
    UserProfile.objects.create(user=user, workspace=workspace)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=user).key)
    small, big = families(100), families(400)
    bodies = [(n, small[n]) for n in ("hyphens", "digits", "digits_490", "ones_490", "binding", "tiny")]
    bodies += [(f"{n}_400", big[n]) for n in ("digits", "words_490")]
    client.post("/api/v1/audits", {"query": "q", "answer": "Warm up."}, format="json")  # imports
    rows = []
    for queue in ("free", "full"):
        if queue == "full":
            for _ in range(2):
                BackgroundJob.objects.create(workspace=workspace, user=user, kind="audit")
        for name, body in bodies:
            data = json.dumps({"query": "q", "mode": "audit-local", **body})
            wall, cpu = time.perf_counter(), time.process_time()
            status = client.post("/api/v1/audits", data, content_type="application/json").status_code
            row = {
                "queue": queue,
                "family": name,
                "kb": len(data) // 1000,
                "status": status,
                "wall_s": round(time.perf_counter() - wall, 3),
                "cpu_s": round(time.process_time() - cpu, 3),
            }
            rows.append(row)
            print(
                f"queue {queue}: {name} ({row['kb']} KB) {status} in {row['cpu_s']} s CPU, {row['wall_s']} s"
            )
            if queue == "free":
                BackgroundJob.objects.all().delete()
    print(json.dumps({"load_average": [round(x, 1) for x in os.getloadavg()], "requests": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The admin console's users (``audit.admin.users``): a workspace Admin given every ``auth``
permission still manages only its own workspace's users and can make no one a superuser or staff."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from audit import roles

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(make_user, django_user_model):
    """A staff Admin with every auth permission, a colleague, and users outside the workspace."""
    from audit.models import UserProfile, Workspace

    boss = make_user("ws-admin", roles.ADMIN, is_staff=True)
    boss.user_permissions.set(Permission.objects.filter(content_type__app_label="auth"))
    colleague = make_user("ann", roles.L1_ANALYST)
    root = make_user("root", None, is_staff=True, is_superuser=True)  # a superuser with a profile here
    loner = django_user_model.objects.create_user("loner", password="pw")  # no profile
    beta_user = django_user_model.objects.create_user("beta-user", password="pw")
    UserProfile.objects.create(user=beta_user, workspace=Workspace.objects.create(name="Beta", slug="beta"))
    return {"boss": boss, "colleague": colleague, "outsiders": [root, loner, beta_user]}


@pytest.fixture
def console(client, people):
    client.force_login(people["boss"])
    return client


def _change_form(user, **extra) -> dict:
    form = {
        "username": user.username,
        "first_name": "",
        "last_name": "",
        "email": "",
        "is_active": "on",
        "groups": [str(Group.objects.get(name=roles.L1_ANALYST).pk)],
        "date_joined_0": "2026-01-01",
        "date_joined_1": "10:00:00",
        "last_login_0": "",
        "last_login_1": "",
    }
    return {**form, **extra}


def test_a_workspace_admin_lists_only_the_users_of_its_workspace(console, people):
    page = console.get("/admin/auth/user/").content.decode()
    assert ">ann<" in page and ">ws-admin<" in page
    for outsider in people["outsiders"]:
        assert f">{outsider.username}<" not in page
    assert "is_superuser" not in page  # nor a filter by it


def test_a_user_outside_the_workspace_answers_as_one_that_does_not_exist(console, people):
    missing = console.get("/admin/auth/user/99999999/change/")
    assert missing.status_code == 302
    for outsider in people["outsiders"]:
        assert console.get(f"/admin/auth/user/{outsider.pk}/change/").status_code == 302
        assert console.get(f"/admin/auth/user/{outsider.pk}/password/").status_code == 404
        console.post(
            f"/admin/auth/user/{outsider.pk}/password/",
            {"password1": "taken-over-9731", "password2": "taken-over-9731", "usable_password": "true"},
        )
        console.post(f"/admin/auth/user/{outsider.pk}/change/", _change_form(outsider, is_active=""))
        console.post(f"/admin/auth/user/{outsider.pk}/delete/", {"post": "yes"})
        outsider.refresh_from_db()
        assert outsider.is_active and outsider.check_password(
            "pw-root" if outsider.username == "root" else "pw"
        )


def test_the_form_offers_no_superuser_staff_or_permissions_and_ignores_them_when_posted(console, people):
    ann = people["colleague"]
    page = console.get(f"/admin/auth/user/{ann.pk}/change/").content.decode()
    for field in ("is_superuser", "is_staff", "user_permissions"):
        assert f'name="{field}"' not in page
    power = Group.objects.create(name="Operators")
    power.permissions.set(Permission.objects.all())
    assert f'value="{power.pk}"' not in page and "Operators" not in page

    every = [str(p.pk) for p in Permission.objects.all()[:5]]
    response = console.post(
        f"/admin/auth/user/{ann.pk}/change/",
        _change_form(ann, first_name="Ann", is_superuser="on", is_staff="on", user_permissions=every),
    )
    assert response.status_code == 302
    ann.refresh_from_db()
    assert ann.first_name == "Ann"  # the change went through, the escalation did not
    assert not ann.is_superuser and not ann.is_staff and not ann.user_permissions.exists()

    refused = console.post(f"/admin/auth/user/{ann.pk}/change/", _change_form(ann, groups=[str(power.pk)]))
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    assert not ann.groups.filter(pk=power.pk).exists()


def test_a_user_added_by_a_workspace_admin_joins_its_workspace(console, people, workspace):
    from django.contrib.auth import get_user_model

    response = console.post(
        "/admin/auth/user/add/",
        {
            "username": "newcomer",
            "password1": "a-long-pass-8841",
            "password2": "a-long-pass-8841",
            "usable_password": "true",
            "role": roles.L2_EXPERT,
            "workspace": "999",  # not offered to a workspace Admin: ignored
        },
    )
    assert response.status_code == 302
    newcomer = get_user_model().objects.get(username="newcomer")
    assert newcomer.theoria_profile.workspace == workspace
    assert list(newcomer.groups.values_list("name", flat=True)) == [roles.L2_EXPERT]
    assert not newcomer.is_staff and not newcomer.is_superuser
    assert console.get(f"/admin/auth/user/{newcomer.pk}/change/").status_code == 200


def test_a_user_a_superuser_adds_gets_the_workspace_and_role_chosen_and_can_work_at_once(
    client, people, workspace
):
    from django.contrib.auth import get_user_model

    from audit.models import Workspace

    beta = Workspace.objects.get(slug="beta")
    client.force_login(people["outsiders"][0])
    form = client.get("/admin/auth/user/add/").content.decode()
    assert 'name="workspace"' in form and 'name="role"' in form
    response = client.post(
        "/admin/auth/user/add/",
        {
            "username": "l2-new",
            "password1": "a-long-pass-8841",
            "password2": "a-long-pass-8841",
            "usable_password": "true",
            "workspace": str(beta.pk),
            "role": roles.L2_EXPERT,
        },
    )
    assert response.status_code == 302
    newcomer = get_user_model().objects.get(username="l2-new")
    assert newcomer.theoria_profile.workspace == beta
    client.force_login(newcomer)
    assert client.get("/escalations/").status_code == 200  # no 403 "belongs to no workspace"
    client.force_login(people["outsiders"][0])
    missing = client.post(
        "/admin/auth/user/add/",
        {"username": "no-role", "password1": "a-long-pass-8841", "password2": "a-long-pass-8841"},
    )
    assert missing.status_code == 200 and not get_user_model().objects.filter(username="no-role").exists()


def test_a_superuser_still_sees_and_grants_everything(client, people):
    root = people["outsiders"][0]
    client.force_login(root)
    page = client.get("/admin/auth/user/").content.decode()
    assert ">loner<" in page and ">root<" in page
    form = client.get(f"/admin/auth/user/{people['colleague'].pk}/change/").content.decode()
    assert 'name="is_superuser"' in form and 'name="is_staff"' in form


def test_a_profile_cannot_pull_a_user_from_outside_into_the_workspace(client, people, workspace):
    from audit.models import UserProfile

    boss = people["boss"]
    boss.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="audit", codename__endswith="userprofile")
    )
    client.force_login(boss)
    form = client.get("/admin/audit/userprofile/add/").content.decode()
    for outsider in people["outsiders"]:
        assert f'value="{outsider.pk}"' not in form
    loner = people["outsiders"][1]
    response = client.post(
        "/admin/audit/userprofile/add/",
        {"user": str(loner.pk), "workspace": str(workspace.pk), "default_mode": ""},
    )
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not UserProfile.objects.filter(user=loner).exists()

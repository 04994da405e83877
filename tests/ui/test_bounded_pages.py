"""Pages of bounded size whatever the answer's length: the queue shows previews of held revisions,
and a long answer's page shows its text in parts (``?part=N``), through the test server's HTTP."""

from __future__ import annotations

import pytest

from audit import constants

pytestmark = pytest.mark.django_db

SENTENCE = "The hippocampus stores the map of place {n} for the rat. "


def _long_answer(workspace, *, chars: int, proposed: bool = False):
    from tests.factories import AnswerFactory, ClaimFactory

    text = "".join(SENTENCE.format(n=n) for n in range(chars // len(SENTENCE) + 1))
    answer = AnswerFactory(workspace=workspace, text=text, original_text=text)
    start = 0
    for n in range(5):  # five claims spread over the text
        sentence = SENTENCE.format(n=n * 100)
        start = text.index(sentence)
        ClaimFactory(
            answer=answer, text=sentence.strip(), span_start=start, span_end=start + len(sentence) - 1
        )
    if proposed:
        type(answer).objects.filter(pk=answer.pk).update(
            revision_status="proposed", proposed_text=text.replace("the rat", "a rat")
        )
    return answer


def test_a_long_answers_page_shows_its_text_in_parts_with_links_to_the_next(client, analyst, workspace):
    import re

    answer = _long_answer(workspace, chars=3 * constants.UI_ANSWER_PART_CHARS)
    client.force_login(analyst)
    first = client.get(f"/answers/{answer.public_id}/")
    html = first.content.decode()
    assert first.status_code == 200
    count = int(re.search(r"Part 1 of (\d+)", html).group(1))
    assert count >= 3 and 'href="?part=2#answer-text"' in html
    assert SENTENCE.format(n=1) in html and SENTENCE.format(n=1000) not in html
    assert len(first.content) < len(answer.text)  # the page holds a part, not the whole text

    last = client.get(f"/answers/{answer.public_id}/?part={count}").content.decode()
    assert f"Part {count} of {count}" in last and 'id="next-part"' not in last
    assert f'href="?part={count - 1}#answer-text"' in last
    shown = "".join(
        client.get(f"/answers/{answer.public_id}/?part={n}")
        .content.decode()
        .split('id="answer-text">')[1]
        .split("</div>")[0]
        for n in range(1, count + 1)
    )
    # every part once, in order: the parts together are the whole text (claims carry their badges)
    plain = re.sub(r"<[^>]+>", "", shown)
    for n in (0, 1, 500, 1000):
        assert plain.count(SENTENCE.format(n=n).strip()) >= 1


def test_a_part_the_answer_does_not_have_is_a_400_naming_part(client, analyst, workspace):
    answer = _long_answer(workspace, chars=2 * constants.UI_ANSWER_PART_CHARS)
    client.force_login(analyst)
    for bad in ("9", "0", "x"):
        response = client.get(f"/answers/{answer.public_id}/?part={bad}")
        assert response.status_code == 400 and "part:" in response.content.decode()


def test_a_short_answers_page_has_no_parts(client, analyst, workspace):
    from tests.factories import AnswerFactory

    answer = AnswerFactory(workspace=workspace)
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    assert 'id="answer-parts"' not in html and answer.text in html


def test_the_queue_shows_bounded_previews_of_held_revisions_of_long_answers(client, analyst, workspace):
    answers = [_long_answer(workspace, chars=100_000, proposed=True) for _ in range(3)]
    client.force_login(analyst)
    response = client.get("/escalations/")
    html = response.content.decode()
    assert response.status_code == 200
    assert all(a.public_id in html for a in answers) and html.count('class="help proposal-cut"') == 3
    assert (
        "The whole revision is on the answer&#x27;s page" in html
        or "The whole revision is on the answer's page" in html
    )
    # three 100 KB answers, each as received and as proposed: 600 KB in full; the previews hold a few KB each
    assert len(response.content) < 3 * 4 * constants.UI_PREVIEW_CHARS + 150_000


def test_the_queue_shows_the_whole_diff_of_a_short_held_revision(client, analyst, workspace):
    from tests.factories import AnswerFactory

    answer = AnswerFactory(
        workspace=workspace, text="Place cells fire in the rat.", original_text="Place cells fire in the rat."
    )
    type(answer).objects.filter(pk=answer.pk).update(
        revision_status="proposed", proposed_text="Place cells fire in a rat."
    )
    client.force_login(analyst)
    html = client.get("/escalations/").content.decode()
    assert 'class="diff proposal-diff"' in html and "proposal-cut" not in html

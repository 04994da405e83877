"""Curated word lists for the structural contradiction checks (``audit.pipeline.contradiction``).

``OPPOSITES``: each line holds two groups of surface forms separated by ``|``; a word of one group
stated by the claim where its best-aligned evidence sentence states a word of the other group (and
not the claim's word) is an opposite predicate. Only predicate-level opposites whose substitution
flips a claim's truth belong here; loose contrasts ("new/old", "first/last", "light/heavy") do not,
because paraphrases use them in other senses.

``NEGATION_CUES``: words that negate the clause they stand in (plus any ``n't`` contraction).
"""

from __future__ import annotations

from audit.pipeline.text import stem

OPPOSITES_TEXT = """
increase increases increased increasing rise rises rose risen raise raises raised elevate elevates elevated elevation enhance enhances enhanced upregulate upregulates upregulated upregulation | decrease decreases decreased decreasing reduce reduces reduced reducing reduction decline declines declined fall falls fell lower lowers lowered diminish diminishes diminished downregulate downregulates downregulated downregulation pause pauses paused
lose loses lost losing loss | preserve preserves preserved preserving retain retains retained retaining spare spares spared maintain maintains maintained intact
high higher highest | low lower lowest
activate activates activated activation stimulate stimulates stimulated | inhibit inhibits inhibited inhibition suppress suppresses suppressed block blocks blocked
promote promotes promoted | prevent prevents prevented impede impedes impeded
strengthen strengthens strengthened potentiate potentiates potentiated | weaken weakens weakened depress depresses depressed
benign | malignant
agonist agonists | antagonist antagonists
allow allows allowed permit permits permitted | prohibit prohibits prohibited forbid forbids forbidden ban bans banned
accept accepts accepted approve approves approved | reject rejects rejected deny denies denied refuse refuses refused
include includes included | exclude excludes excluded
gain gains gained | lose loses lost
positive positively | negative negatively
above | below
before | after
more | less
larger largest bigger biggest greater greatest | smaller smallest lesser least
faster fastest | slower slowest
longer longest | shorter shortest
older oldest | younger youngest
earlier earliest | later latest
maximum | minimum
improve improves improved improvement | worsen worsens worsened deteriorate deteriorates deteriorated
beneficial protective | harmful detrimental
effective | ineffective
safe | unsafe
stable | unstable
sufficient | insufficient
necessary required | unnecessary
possible | impossible
legal | illegal
success successful | failure unsuccessful
superior | inferior
acute | chronic
dominant | recessive
resistant resistance | susceptible susceptibility sensitive sensitivity
present | absent
mandatory compulsory obligatory | optional voluntary
open | closed
"""


def _build() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for line in OPPOSITES_TEXT.strip().splitlines():
        left, right = line.split("|")
        a = {stem(w) for w in left.split()}
        b = {stem(w) for w in right.split()}
        for w in a:
            table.setdefault(w, set()).update(b - a)
        for w in b:
            table.setdefault(w, set()).update(a - b)
    return {w: frozenset(v) for w, v in table.items() if v}


OPPOSITES: dict[str, frozenset[str]] = _build()

NEGATION_CUES = frozenset("not no never none neither nor without cannot nothing nobody nowhere".split())

"""docs/ci.md's recipes with a server name what contrib/ci has: every
`with:` of the GitHub example is an input of the action, every variable
of the GitLab example one of the template's, the job they extend is
there, and the files they name exist."""
import os
import re

import yaml

from conftest import ROOT


def blocks():
    text = open(os.path.join(ROOT, "docs", "ci.md")).read()
    text = text[:text.index("## Without a server")]
    return [yaml.safe_load(b) for b in
            re.findall(r"```yaml\n(.*?)```", text, re.S)]


def test_the_recipes_match_contrib_ci():
    gh, gl = blocks()
    action = yaml.safe_load(open(os.path.join(
        ROOT, "contrib", "ci", "github", "action.yml")))
    steps = gh["jobs"]["unit"]["steps"]
    uses = [s for s in steps if s.get("uses") == "./contrib/ci/github"]
    assert len(uses) == 1, steps
    assert set(uses[0]["with"]) <= set(action["inputs"]), uses
    tpl_path = gl["include"][0]["local"]
    tpl = yaml.safe_load(open(os.path.join(ROOT, tpl_path)))
    job = gl["unit"]
    assert job["extends"] in tpl
    assert set(job["variables"]) <= set(tpl[job["extends"]]["variables"])

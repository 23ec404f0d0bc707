"""The machinery every judging method shares, private to `cejudge_dspy.judges` (its methods import these
modules directly; other packages reach what they need through the `judges` face):

* `_stage`: a stage, one typed DSPy call with its output check and one retry through the other adapter,
  and one presentation order of a pairwise judgment;
* `_probability_readings`: asking a backbone for token probabilities and reading a record's out of them;
* `_text_scoring`: the current backbone's scorer of a given text, for the likelihood judge and checks;
* `_backbone_features`: what a backbone gave the judges, as a record's `features`;
* `_said_once`: notices given once per backbone;
* `_shared_work`: one stage result per unique input, shared across responses and items;
* `_memo_adapters`: DSPy's adapters with the signature-only parts of a prompt formatted once;
* `_judging_run`: what a judging run runs inside (no call history, the garbage collector tuned);
* `_sync_bridge`: the async pipeline run from synchronous code;
* `_saved_programs`: saved (tuned) programs and their manifests;
* `_prompt_fingerprint`: a program's prompts as one hash.
"""

"""The records the store keeps, one module each: a run's settings and row (`run.py`:
`RunConfig`, with its secrets redacted as stored, and `RunRecord`) and a finished trial
(`trial.py`: `TrialResult`). A command that reads only runs (the gate) imports `run.py`
alone, not what a whole trial is made of (the graders' verdicts, the transcript)."""

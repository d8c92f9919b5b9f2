"""What was said, as the graders, the scripted user and the baselines read it: values in any
of their usual forms (`values`, which reads words through `words` and numbers said in words
through `numbers`), and what a message does in the dialogue (`dialogue`).

Pure functions of text and of the records a conversation showed; nothing here does I/O.
"""

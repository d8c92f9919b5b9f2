"""What was said, as the graders, the scripted user and the baselines read it.

- `values`: a text as tokens, a value in any of its usual forms (numbers by value, dates,
  times, phones, emails), and whether one text contains another.
- `words`: a word's one form for its inflections, spellings and street abbreviations.
- `numbers`: numbers said in words, written in digits.
- `clauses`: a message as sentences and clauses: which tokens each states, denies or leaves
  undecided (negation, hedges), and whether it asks.
- `records`: the records a conversation's tool results showed, and how a message refers to one.
- `actions`: the words that name what a write tool does (or what a read looks up).
- `proposals`: whether a message proposed a given call, its action, record and arguments bound
  by value.
- `context`: what a bare question ("Is that OK?") asks about: the messages before it.
- `dialogue`: whether a message asks, solicits a decision, or answers yes or no.
- `stances`: where the agent ended on a fact over the whole conversation.
- `declining`: whether a clause declines an action, and whether it gives a cause.

They layer: `words` and `numbers` at the bottom, `values` reading text through them; `clauses`
over `values`; `records` and `actions` over `clauses`; `proposals` (over `records` and
`actions`), `context` (over `records` and `actions`), `dialogue` (over `clauses`), `stances`
(over `records`) and `declining` (over `actions`) on top. Pure functions of text and of the
records a conversation showed; nothing here does I/O, and the one import from outside the
package is `toolproof.spec` (the scripted user's trigger types, in `dialogue`).
"""

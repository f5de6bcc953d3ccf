"""Installing a plan: the install set (the torch family as files with their sha256, the guard, the rest as given),
the policy that decides what an install keeps and replaces, the backends (uv, pip) behind a small interface, the
all-or-nothing run with its snapshot, and the verification of what was installed. Each module is imported by
name: nothing is loaded here."""

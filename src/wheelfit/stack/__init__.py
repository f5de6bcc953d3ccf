"""The stack around torch: packages built against one torch build (flash-attn, torch-scatter, ...) planned with
it. :mod:`.match` reads which build a wheel was made for (pure), :mod:`.sources` lists an extension's wheels
(I/O), :mod:`.joint` makes the one plan, backing off to an older torch when an extension has no wheel for the
newest, and :mod:`.files` turns the plan's extension files into install-set entries."""

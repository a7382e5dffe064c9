"""Server-side apply and ``metadata.managedFields``, as kube-apiserver keeps them.

The layers follow structured-merge-diff and apimachinery's ``managedfields``:

- :mod:`.fieldpath`: field paths and sets, and their ``FieldsV1`` encoding;
- :mod:`.schema`: the types merging is driven by (list and map semantics);
- :mod:`.typed`: validation, field sets, comparison, merge and removal of values;
- :mod:`.managedfields`: ``managedFields`` entries and apply conflicts;
- :mod:`.updater`: who owns what after an update or an apply;
- :mod:`.manager`: the field manager of one resource version (upstream's chain);
- :mod:`.resource`: the field managers of a resource, built on first use;
- :mod:`.equality`: no-op writes keep their managedFields timestamps.
"""

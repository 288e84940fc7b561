"""The public API's conventions, shared by the functions that serve ``/v1``: routes by path
template (``routes``), opaque page tokens (``paging``) and etags (``etags``). See
docs/api.md for the conventions themselves."""

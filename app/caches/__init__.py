"""Cached wrappers, one module per area: hashable arguments in, a library result out, every cache bounded
(``st.cache_data(max_entries=...)``). Loaded models are never cached here (explorer.runtime.modelcache holds them)."""

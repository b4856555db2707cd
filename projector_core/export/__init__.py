"""Sharing without a server: a static site of a LOGDIR's views (site.py) and pictures of a
projection (render.py), both from projections asked as the REST API asks them, computed by the
same projection jobs and result cache (projections.py). Nothing here imports the web layer:
the page's HTML and the front end's folder are handed in (:class:`site.SitePage`)."""

"""Sharing without a server: a static site of a LOGDIR's views (site.py) and pictures of a
projection (render.py). The projections are the service's, handed in (a ``Project``: the
request the page makes, computed by the same jobs and result cache), so this package sits
below the service and asks nothing of it. Nothing here imports the web layer: the page's HTML
and the front end's folder are handed in (:class:`site.SitePage`)."""

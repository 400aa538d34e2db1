"""``/api/genes`` and ``/api/genes/{id}``."""

from __future__ import annotations

import falcon

from resource_server.errors import NotFound
from resource_server.params import Param, parse_filters
from resource_server.queries import genes as q
from resource_server.representations.genes import gene
from resource_server.resources.base import Resource, redirect
from resource_server.resources.catalog_pages import render_page
from resource_server.routes import CollectionRoute

ROUTE = CollectionRoute(
    rel="genes",
    path="/genes",
    item_rel="gene",
    filters=(Param("artist_id"), Param("artwork_id")),
)


class Genes(Resource):
    """The paginated list of genes."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List genes matching the filters."""
        filters = parse_filters(req.params, ROUTE.filters)
        page = self.page_params(req)
        urls = self.urls(req)
        with self.stores.sessions() as session:
            if page.sample:
                one = q.sample_gene(session, filters)
                if one is None:
                    raise NotFound("Gene")
                redirect(resp, urls.api(f"/genes/{one.id}"))
                return
            result = q.list_genes(session, filters, page)
        web = self.settings.web_url
        render_page(
            req,
            resp,
            urls,
            path="/genes",
            plural="genes",
            filters=filters,
            page=page,
            result=result,
            items=[gene(g, urls, web) for g in result.rows],
        )


class GeneItem(Resource):
    """One gene, by id (or by slug, redirecting to the id URL)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Show a gene."""
        with self.stores.sessions() as session:
            found, by_slug = q.find_gene(session, id)
        if found is None:
            raise NotFound("Gene")
        urls = self.urls(req)
        if by_slug:
            redirect(resp, urls.api(f"/genes/{found.id}"))
            return
        resp.media = gene(found, urls, self.settings.web_url)

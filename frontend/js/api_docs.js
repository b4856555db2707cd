// /docs: Swagger UI over this server's OpenAPI document, started from a file because the
// Content-Security-Policy runs no inline script (FastAPI's own page has one). The document's
// URL comes from this script's data-openapi-url (it holds the token path when there is one).
// Swagger UI's bundle, loaded by the page before this script, defines the global below.
{
  /** @type {any} */
  const bundle = /** @type {any} */ (globalThis).SwaggerUIBundle;
  /** @type {any} */ (window).ui = bundle({
    url: /** @type {HTMLScriptElement} */ (document.currentScript).dataset.openapiUrl,
    dom_id: '#swagger-ui',
    layout: 'BaseLayout',
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    presets: [bundle.presets.apis, bundle.SwaggerUIStandalonePreset],
  });
}

// /docs: Swagger UI over this server's OpenAPI document, started from a file because the
// Content-Security-Policy runs no inline script (FastAPI's own page has one). The document's
// URL comes from this script's data-openapi-url (it holds the token path when there is one).
window.ui = SwaggerUIBundle({
  url: document.currentScript.dataset.openapiUrl,
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});

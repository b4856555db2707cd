// The notebook widget's front end: the projector page served by the kernel's own server, in
// an iframe. Nothing comes from a CDN. Selection, colour and projection travel between the
// page and Python through that server (/api/session/state), not through this module.
// Colab runs the kernel elsewhere: its proxy gives the port a URL the browser can reach.
// A server with a token is shown under token/TOKEN/ (the `path`): an iframe of another site
// keeps no cookie.

async function pageUrl(model) {
  const proxyPort = globalThis.google?.colab?.kernel?.proxyPort;
  const base = proxyPort ? await proxyPort(model.get('port'), { cache: false }) : model.get('url');
  const url = new URL(model.get('path') || '', new URL(base, location.href));
  url.searchParams.set('embed', '1');
  return url.href;
}

async function render({ model, el }) {
  const frame = document.createElement('iframe');
  frame.title = 'Projector';
  frame.style.cssText = 'width:100%;border:1px solid #ddd;border-radius:4px;display:block';
  frame.style.height = `${model.get('height')}px`;
  model.on('change:height', () => {
    frame.style.height = `${model.get('height')}px`;
  });
  el.appendChild(frame);
  frame.src = await pageUrl(model);
  return () => frame.remove();
}

export default { render };

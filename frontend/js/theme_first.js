// The page's theme, set before first paint so a dark-mode user never sees a white flash: a
// classic script in <head> (a module would run after parsing), in a file because the
// Content-Security-Policy runs no inline script. Storage is refused to a page in another
// site's iframe (the notebook widget): no saved theme there.
{
  let saved = null;
  try { saved = localStorage.getItem('projector-theme'); } catch { saved = null; }
  document.documentElement.dataset.theme = saved
    || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
}

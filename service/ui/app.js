// ocrgate demo page. Plain JavaScript, no dependencies: it calls the same API as any client
// (POST /ocr, POST /ocr-json, GET /templates) with the same auth, and draws what comes back.
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const KEY = 'ocrgate.apiKey'; // sessionStorage only: gone when the tab closes

let current = null; // the file last read (a File)
let following = null; // the job the page follows now ({id}); another file or Cancel lets it go

// What each error code means for a person; the service's own message follows it.
const explain = {
  unsupported_image_format: 'That file is not an image or document ocrgate can read.',
  unsupported_media_type: 'The request was not sent in a form ocrgate takes.',
  undecodable_image: 'The image looks damaged or cut short.',
  image_too_large: 'The image has too many pixels for this service.',
  encrypted_document: 'The PDF is password-protected.',
  corrupt_document: 'The document looks damaged or cut short.',
  document_too_complex: 'A page of the document takes too long to draw.',
  document_too_large: 'The document (or a page of it) is too large for this service.',
  too_many_pages: 'The document has more pages than this service reads at once.',
  too_many_jobs: 'You have as many documents being read as this service allows at once.',
  job_store_full: 'The service holds as many documents as it has room for.',
  jobs_disabled: 'This service reads big documents only in parts: it runs no jobs.',
  document_engine_unavailable: 'The PDF reader is still starting.',
  body_too_large: 'The file is larger than this service accepts.',
  overloaded: 'The service is busy right now.',
  unauthorized: 'This service needs an API key: enter it above.',
  timeout: 'Reading took longer than the service allows.',
  runtime_unavailable: 'The OCR models are not ready yet.',
  chat_not_configured: 'No chat model is configured for extraction on this service.',
  invalid_schema: 'The JSON Schema cannot be used.',
  unknown_template: 'No such template.',
};

function headers() {
  const h = {};
  const key = sessionStorage.getItem(KEY);
  if (key) h.Authorization = 'Bearer ' + key;
  return h;
}

// withLang adds the chosen language to form; the default (ch) is left out, as the service's own.
function withLang(form) {
  const lang = $('lang').value;
  if (lang && lang !== 'ch') form.append('lang', lang);
}

// call posts form (a FormData: the file itself and the options, sent as multipart/form-data, a
// third smaller than base64 JSON) to path, or gets path without one, and returns
// {ok, status, body, res}; network failures become a status 0.
async function call(path, form) {
  let res;
  try {
    res = await fetch(path, form === undefined ? { headers: headers() }
      : { method: 'POST', headers: headers(), body: form });
  } catch (e) {
    return { ok: false, status: 0, body: { error: 'The service could not be reached.', code: 'network' } };
  }
  let parsed = null;
  try { parsed = await res.json(); } catch (e) { /* not JSON */ }
  return { ok: res.ok, status: res.status, body: parsed, res };
}

// problem turns an error answer into one readable sentence.
function problem(r) {
  const b = r.body || {};
  const code = b.code || 'http_' + r.status;
  const said = b.error || 'The service answered ' + r.status + '.';
  let msg = explain[code] ? explain[code] + ' (' + said + ')' : said;
  const wait = r.res && r.res.headers.get('Retry-After');
  if (wait) msg += ' Try again in ' + wait + ' s.';
  return (r.status ? r.status + ' ' : '') + code + ': ' + msg;
}

function say(el, text, isError) {
  el.textContent = text;
  el.classList.toggle('error', !!isError);
}

async function run(file) {
  if (!file) return;
  const status = $('status');
  say(status, 'Reading ' + file.name + '…');
  $('result').hidden = true;
  $('extract').disabled = true;
  current = file;
  following = null;
  $('job').hidden = true;
  $('extract').disabled = false;
  const form = new FormData();
  form.append('file', file);
  withLang(form);
  const started = performance.now();
  const r = await call('/ocr', form);
  if (!r.ok && r.body && (r.body.code === 'too_many_pages' || r.body.code === 'body_too_large')) {
    // Over what one request reads: the service reads it as a job, page by page.
    await runJob(file, started);
    return;
  }
  if (!r.ok) {
    say(status, problem(r), true);
    return;
  }
  const took = (performance.now() - started) / 1000;
  say(status, 'Read ' + file.name + '.');
  show(r.body, file, took);
}

// runJob submits file as a job (POST /jobs, the file itself as the body: a big document streams
// into the service's store), shows its pages done of total while the service reads it, waiting
// on the job rather than polling (GET /jobs/{id}?wait=), then shows the result as /ocr's.
async function runJob(file, started) {
  const status = $('status');
  const q = new URLSearchParams();
  const lang = $('lang').value;
  if (lang && lang !== 'ch') q.set('lang', lang);
  const type = file.type === 'application/pdf' || file.type.startsWith('image/') ? file.type : 'application/octet-stream';
  say(status, file.name + ' has more pages than one request reads: sending it as a job…');
  let r;
  try {
    const res = await fetch('/jobs' + (q.size ? '?' + q : ''), {
      method: 'POST', headers: { ...headers(), 'Content-Type': type }, body: file,
    });
    let body = null;
    try { body = await res.json(); } catch (e) { /* not JSON */ }
    r = { ok: res.ok, status: res.status, body, res };
  } catch (e) {
    r = { ok: false, status: 0, body: { error: 'The service could not be reached.', code: 'network' } };
  }
  if (!r.ok) {
    say(status, problem(r), true);
    return;
  }
  const mine = { id: r.body.id };
  following = mine;
  let j = r.body;
  say(status, 'Reading ' + file.name + ' as a job.');
  while (!['succeeded', 'failed', 'canceled'].includes(j.state)) {
    progress(file, j);
    const g = await call('/jobs/' + encodeURIComponent(mine.id) + '?wait=20s');
    if (following !== mine) return; // another file, or canceled
    if (!g.ok) {
      $('job').hidden = true;
      say(status, problem(g), true);
      return;
    }
    j = g.body;
  }
  progress(file, j);
  following = null;
  $('job-cancel').disabled = true;
  if (j.state !== 'succeeded') {
    const e = j.error || { code: 'job_' + j.state, error: 'The job ended ' + j.state + '.' };
    say(status, problem({ status: 0, body: e }), true);
    return;
  }
  const took = (performance.now() - started) / 1000;
  say(status, 'Read ' + file.name + ' as a job: ' + j.pages.done + ' pages' +
    (j.pages.failed ? ', ' + j.pages.failed + ' of them failed' : '') + '.');
  show(j.result, file, took);
  // A job's result comes in /ocr's JSON only (docs/formats.md): sending the file again as pdf
  // would meet the same synchronous limit that made it a job.
  $('pdf-row').hidden = true;
}

// progress shows a job's pages done of total.
function progress(file, j) {
  const bar = $('job-progress');
  bar.max = Math.max(1, j.pages.total);
  bar.value = j.pages.done;
  $('job-label').textContent = file.name + ': ' + j.pages.done + ' of ' + j.pages.total + ' pages read (' + j.state + ')';
  $('job-cancel').disabled = ['succeeded', 'failed', 'canceled'].includes(j.state);
  $('job').hidden = false;
}

// cancelJob cancels the job the page follows (DELETE /jobs/{id}): its pages stop, it is deleted.
async function cancelJob() {
  const mine = following;
  if (!mine) return;
  following = null;
  $('job-cancel').disabled = true;
  let ok = false;
  try {
    const res = await fetch('/jobs/' + encodeURIComponent(mine.id), { method: 'DELETE', headers: headers() });
    ok = res.ok || res.status === 404;
  } catch (e) { /* said below */ }
  say($('status'), ok ? 'Canceled.' : 'The job could not be canceled.', !ok);
}

// show draws the answer: a page per image (or per document page) with its boxes, the region list,
// the text and the raw JSON.
function show(ans, file, took) {
  const pages = ans.pages || [{ page: 1, width: ans.image_info.width, height: ans.image_info.height, regions: ans.regions }];
  const count = pages.reduce((n, p) => n + p.regions.length, 0);
  $('meta').textContent = count + ' regions · processed in ' + ans.processing_time.toFixed(2) + ' s (' +
    took.toFixed(2) + ' s with the upload) · ' + (ans.image_info.format || '') + ' ' +
    (ans.pages ? pages.length + ' pages' : ans.image_info.width + '×' + ans.image_info.height);
  const host = $('pages');
  const list = $('regions');
  host.replaceChildren();
  list.replaceChildren();
  const url = ans.pages ? null : URL.createObjectURL(file);
  let n = 0;
  for (const p of pages) {
    const fig = document.createElement('figure');
    fig.className = 'page';
    if (p.error) {
      // A page that could not be read: no sheet to draw boxes on, just why.
      fig.classList.add('failed');
      const cap = document.createElement('figcaption');
      cap.textContent = 'Page ' + p.page + ' could not be read: ' + p.error.message + ' (' + p.error.code + ')';
      fig.append(cap);
      host.append(fig);
      continue;
    }
    const sheet = document.createElement('div');
    sheet.className = 'sheet';
    sheet.style.aspectRatio = p.width + ' / ' + p.height;
    if (url) {
      const img = document.createElement('img');
      img.alt = 'The image that was read';
      img.src = url;
      img.onerror = () => img.remove(); // a format the browser cannot show (TIFF): boxes on a blank sheet
      sheet.append(img);
    }
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 ' + p.width + ' ' + p.height);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('aria-hidden', 'true');
    for (const reg of p.regions) {
      const i = n++;
      const poly = document.createElementNS(SVG, 'polygon');
      poly.setAttribute('points', reg.bounding_shape.points.map((q) => q.x + ',' + q.y).join(' '));
      poly.setAttribute('class', 'box');
      poly.dataset.i = i;
      const title = document.createElementNS(SVG, 'title');
      title.textContent = reg.text;
      poly.append(title);
      svg.append(poly);
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.i = i;
      b.textContent = reg.text;
      b.title = 'confidence ' + reg.confidence.toFixed(3);
      li.append(b);
      list.append(li);
    }
    sheet.append(svg);
    fig.append(sheet);
    if (ans.pages) {
      const cap = document.createElement('figcaption');
      cap.textContent = 'Page ' + p.page + (p.source ? ' (' + p.source + ')' : '');
      fig.append(cap);
    }
    host.append(fig);
  }
  $('text').textContent = ans.text;
  $('pdf-row').hidden = false;
  $('pdf-status').textContent = '';
  $('json').textContent = JSON.stringify(ans, null, 2);
  $('copied').textContent = '';
  $('result').hidden = false;
}

// downloadPDF asks for the current file as a searchable PDF (an image or a TIFF's pages with their
// words as invisible text; a PDF with a layer added over its OCR'd pages) and saves it under the
// file's name (a PDF's with "-searchable" added).
async function downloadPDF() {
  if (!current) return;
  const status = $('pdf-status');
  say(status, 'Writing the PDF…');
  const form = new FormData();
  form.append('file', current);
  form.append('format', 'pdf');
  let res;
  try {
    res = await fetch('/ocr', { method: 'POST', headers: headers(), body: form });
  } catch (e) {
    say(status, 'The service could not be reached.', true);
    return;
  }
  if (!res.ok) {
    let body = null;
    try { body = await res.json(); } catch (e) { /* not JSON */ }
    say(status, problem({ status: res.status, body, res }), true);
    return;
  }
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  const base = current.name.replace(/\.[^.]*$/, '');
  a.download = base + (/\.pdf$/i.test(current.name) ? '-searchable' : '') + '.pdf';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  say(status, 'Saved ' + a.download + '.');
}

// highlight marks region i's box and line (or clears them for i = null).
function highlight(i, scroll) {
  for (const el of document.querySelectorAll('.active')) el.classList.remove('active');
  if (i == null) return;
  for (const el of document.querySelectorAll('[data-i="' + i + '"]')) {
    el.classList.add('active');
    if (scroll && el.tagName === 'BUTTON') el.scrollIntoView({ block: 'nearest' });
  }
}

async function extract() {
  if (!current) return;
  const st = $('extract-status');
  const out = $('object');
  out.hidden = true;
  const form = new FormData();
  form.append('file', current);
  withLang(form);
  if ($('template').value) {
    form.append('template', $('template').value);
  } else {
    try {
      JSON.parse($('schema').value);
    } catch (e) {
      say(st, 'The schema is not valid JSON: ' + e.message, true);
      return;
    }
    form.append('schema', $('schema').value);
  }
  say(st, 'Extracting from ' + current.name + '…');
  $('extract').disabled = true;
  const r = await call('/ocr-json', form);
  $('extract').disabled = false;
  if (!r.ok) {
    say(st, problem(r), true);
    return;
  }
  const h = (name) => r.res.headers.get(name);
  say(st, 'Done: OCR ' + (h('X-OCR-Time') || '?') + ' s, chat ' + (h('X-Chat-Time') || '?') + ' s.');
  out.textContent = JSON.stringify(r.body, null, 2);
  out.hidden = false;
}

// loadTemplates lists the service's templates (when the key allows); the built-in two stay otherwise.
async function loadTemplates() {
  const r = await call('/templates');
  if (!r.ok || !r.body || !Array.isArray(r.body.templates)) return;
  const sel = $('template');
  const own = sel.querySelector('option[value=""]');
  sel.replaceChildren();
  for (const t of r.body.templates) {
    const o = document.createElement('option');
    o.value = t.name;
    o.textContent = t.name;
    o.title = t.description;
    o.selected = t.name === r.body.default;
    sel.append(o);
  }
  sel.append(own);
}

function init() {
  const file = $('file');
  const key = $('key');
  key.value = sessionStorage.getItem(KEY) || '';
  key.addEventListener('change', () => {
    if (key.value) sessionStorage.setItem(KEY, key.value.trim());
    else sessionStorage.removeItem(KEY);
    loadTemplates();
  });
  $('pdf').addEventListener('click', downloadPDF);
  $('job-cancel').addEventListener('click', cancelJob);
  $('forget').addEventListener('click', () => {
    sessionStorage.removeItem(KEY);
    key.value = '';
  });
  file.addEventListener('change', () => run(file.files[0]));
  // Another language reads the file again.
  $('lang').addEventListener('change', () => run(current));
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    if (e.dataTransfer.files.length) run(e.dataTransfer.files[0]);
  });
  document.addEventListener('paste', (e) => {
    const f = [...(e.clipboardData ? e.clipboardData.files : [])][0];
    if (f) run(f);
  });
  const list = $('regions');
  const pages = $('pages');
  for (const [ev, fn] of [['mouseover', (e) => highlight(e.target.dataset.i, false)], ['focusin', (e) => highlight(e.target.dataset.i, false)]]) {
    list.addEventListener(ev, fn);
  }
  list.addEventListener('mouseleave', () => highlight(null));
  list.addEventListener('focusout', () => highlight(null));
  pages.addEventListener('mouseover', (e) => { if (e.target.dataset && e.target.dataset.i) highlight(e.target.dataset.i, true); });
  pages.addEventListener('mouseleave', () => highlight(null));
  pages.addEventListener('click', (e) => {
    const i = e.target.dataset && e.target.dataset.i;
    if (i) list.querySelector('button[data-i="' + i + '"]').focus();
  });
  $('copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($('json').textContent);
      $('copied').textContent = 'Copied.';
    } catch (e) {
      $('copied').textContent = 'Copy failed: select the text below and copy it.';
      $('json').parentElement.open = true;
    }
  });
  $('template').addEventListener('change', () => { $('schema-box').hidden = $('template').value !== ''; });
  $('extract').addEventListener('click', extract);
  loadTemplates();
}

init();

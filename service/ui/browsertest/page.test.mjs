// Drives ocrgate's demo page in Debian's Chromium (playwright-core with executablePath: nothing
// downloads a browser). Run by service/ui's TestPageInChromium, which starts the real service and
// passes what this script needs in the environment:
//
//   OCRGATE_URL      the service (configured with the API key OCRGATE_KEY and a stand-in chat model)
//   OCRGATE_KEY      the API key
//   RECEIPT          a receipt of testdata/receipts;  KNOWN: lines of its ground truth, one per line;
//                    TOTAL: its total, as its key file and the stand-in chat model have it
//   OUT_DIR          where the screenshots and a text file go
//   CHROMIUM         the browser executable
//   PDF              a two-page born-digital PDF;  PDF_TEXT: lines of its text, one per line
//   PDF_FAILING      a three-page PDF whose page 2 cannot be read (degenerate_page)
//   SCANNED          a scanned PDF of three RECEIPTs: more OCR pages than one request reads there
//
// Exits non-zero, saying what failed, when the page does not do what a person expects.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(name + ' is not set');
  return v;
};
const base = env('OCRGATE_URL');
const key = env('OCRGATE_KEY');
const receipt = env('RECEIPT');
const known = env('KNOWN').split('\n').filter(Boolean);
const total = env('TOTAL');
const out = env('OUT_DIR');
const pdf = env('PDF');
const pdfText = env('PDF_TEXT').split('\n').filter(Boolean);
const pdfFailing = env('PDF_FAILING');
const scanned = env('SCANNED');
const step = (msg) => console.log('page test: ' + msg);

const profile = mkdtempSync(join(tmpdir(), 'ocrgate-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: env('CHROMIUM'),
  headless: true,
  viewport: { width: 1200, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const errors = [];
try {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(120_000); // OCR of a receipt on a busy 2-core machine under -race
  page.on('pageerror', (e) => errors.push('page error: ' + e.message));
  // Console errors fail the test, except the browser's note on the refusals the test provokes.
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of (401|413|415) /.test(m.text())) errors.push('console: ' + m.text());
  });
  // Nothing may be fetched from anywhere but the service.
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('blob:') && !r.url().startsWith('data:')) errors.push('fetched ' + r.url()); });

  await page.goto(base + '/');
  assert.equal(await page.title(), 'ocrgate — try it');
  step('page loaded');

  // Every control has a label a screen reader announces.
  const unlabelled = await page.$$eval('input, select, textarea', (els) =>
    els.filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')).map((el) => el.id || el.outerHTML));
  assert.deepEqual(unlabelled, [], 'controls without a label');

  // Keyboard: Tab reaches the file input first, then the key field.
  await page.keyboard.press('Tab'); // the API link in the header
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'file', 'Tab does not reach the file input');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'key', 'Tab does not reach the key field');
  step('labels and keyboard order');

  // Without the key the service refuses; the page says so in words.
  await page.setInputFiles('#file', receipt);
  await page.locator('#status.error').waitFor();
  const refused = await page.textContent('#status');
  assert.match(refused, /^401 unauthorized: This service needs an API key: enter it above\. \(missing or invalid API key/, 'the 401 is not explained');
  step('401 explained: ' + refused);

  // With the key (kept in sessionStorage only) the receipt is read.
  await page.fill('#key', key);
  await page.press('#key', 'Tab'); // change event
  assert.equal(await page.evaluate(() => sessionStorage.getItem('ocrgate.apiKey')), key);
  assert.equal(await page.evaluate(() => localStorage.length), 0, 'something was written to localStorage');
  const answered = page.waitForResponse((r) => r.url() === base + '/ocr' && r.request().method() === 'POST');
  await page.setInputFiles('#file', []);
  await page.setInputFiles('#file', receipt);
  const resp = await answered;
  assert.equal(resp.status(), 200);
  // The file goes as itself in a multipart form, not as base64 (a third larger).
  const sentAs = resp.request().headers()['content-type'] || '';
  assert.match(sentAs, /^multipart\/form-data; boundary=/, 'the file was not sent as a form: ' + sentAs);
  // (What the form holds is checked by the Go test, which sees the bodies the service receives:
  // Chromium does not hand a form's file bytes to the page's observers.)
  step('sent as ' + sentAs.split(';')[0]);
  const ans = await resp.json();
  await page.locator('#result:not([hidden])').waitFor();
  const boxes = await page.locator('svg polygon.box').count();
  const lines = await page.locator('#regions li').count();
  assert.ok(ans.regions.length > 20, 'the API found only ' + ans.regions.length + ' regions');
  assert.equal(boxes, ans.regions.length, 'boxes drawn ≠ regions in the answer');
  assert.equal(lines, ans.regions.length, 'region lines ≠ regions in the answer');
  const text = await page.textContent('#text');
  for (const k of known) assert.ok(text.includes(k), 'the page does not show "' + k + '" from the receipt');
  assert.match(await page.textContent('#meta'), new RegExp('^' + ans.regions.length + ' regions · processed in'));
  step(boxes + ' boxes for ' + ans.regions.length + ' regions; shows ' + known.map((k) => '"' + k + '"').join(', '));

  // The image is on screen under its boxes, scaled to the same size.
  const fit = await page.evaluate(() => {
    const img = document.querySelector('.sheet img');
    const svg = document.querySelector('.sheet svg').getBoundingClientRect();
    const r = img.getBoundingClientRect();
    return { loaded: img.complete && img.naturalWidth > 0, dw: Math.abs(r.width - svg.width), dh: Math.abs(r.height - svg.height) };
  });
  assert.ok(fit.loaded && fit.dw < 1 && fit.dh < 1, 'image and boxes do not line up: ' + JSON.stringify(fit));

  // "Download searchable PDF" saves the image as a PDF (the JPEG as it was sent, its words as
  // invisible text) under the image's name.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#pdf')]);
  assert.equal(download.suggestedFilename(), 'photo.pdf');
  const saved = readFileSync(await download.path());
  assert.equal(saved.subarray(0, 5).toString('latin1'), '%PDF-', 'the download is not a PDF');
  assert.ok(saved.includes(readFileSync(receipt)), 'the PDF does not hold the JPEG as it was sent');
  await page.locator('#pdf-status:not(.error)', { hasText: 'Saved photo.pdf.' }).waitFor();
  step('searchable PDF downloaded: ' + saved.length + ' bytes');

  // Hovering a line highlights its box; hovering a box highlights its line.
  const third = page.locator('#regions button').nth(2);
  await third.hover();
  assert.equal(await page.locator('polygon.box.active').count(), 1);
  assert.equal(await page.locator('polygon.box.active').getAttribute('data-i'), '2');
  await page.locator('polygon.box').nth(5).hover({ force: true });
  assert.equal(await page.locator('#regions button.active').getAttribute('data-i'), '5');
  // …and so does keyboard focus.
  await page.locator('#regions button').nth(7).focus();
  assert.equal(await page.locator('polygon.box.active').getAttribute('data-i'), '7');
  step('box ↔ line highlighting (mouse and keyboard)');

  // The raw JSON is the answer, and the copy button copies it.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await page.click('#copy');
  await page.locator('#copied', { hasText: 'Copied.' }).waitFor();
  const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  assert.equal(copied.regions.length, ans.regions.length);
  assert.equal(copied.text, ans.text);
  step('JSON copied');

  // The picture for the README: the top of the page, one line's box highlighted.
  const shown = Math.max(0, ans.regions.findIndex((r) => r.text.includes(known[0])));
  await page.locator('#regions button').nth(shown).dispatchEvent('mouseover');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(out, 'page.png'), fullPage: false });
  step('screenshot ' + join(out, 'page.png'));

  // A narrow window (a phone) needs no sideways scrolling.
  await page.setViewportSize({ width: 380, height: 800 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, 'a 380 px window scrolls sideways by ' + overflow + ' px');
  await page.screenshot({ path: join(out, 'page-narrow.png') });
  await page.setViewportSize({ width: 1200, height: 900 });
  step('narrow window fits');

  // /ocr-json with the built-in receipt template shows the filled object.
  await page.selectOption('#template', 'receipt');
  const extractSent = page.waitForRequest((r) => r.url() === base + '/ocr-json' && r.method() === 'POST');
  await page.click('#extract');
  const exReq = await extractSent;
  assert.match(exReq.headers()['content-type'] || '', /^multipart\/form-data; boundary=/, '/ocr-json was not sent as a form');

  await page.locator('#object:not([hidden])').waitFor();
  const object = JSON.parse(await page.textContent('#object'));
  assert.equal(object.total, total);
  assert.match(await page.textContent('#extract-status'), /^Done: OCR [\d.]+ s, chat [\d.]+ s\.$/);
  // …and a broken schema is explained, not sent.
  await page.selectOption('#template', '');
  await page.fill('#schema', '{"type": ');
  await page.click('#extract');
  assert.match(await page.textContent('#extract-status'), /^The schema is not valid JSON/);
  // …and a valid one goes as a "schema" field beside the file.
  const fields = ['company', 'date', 'address', 'total'];
  await page.fill('#schema', JSON.stringify({ type: 'object', properties: Object.fromEntries(fields.map((f) => [f, { type: ['string', 'null'] }])), required: fields }));
  const bySchema = page.waitForResponse((r) => r.url() === base + '/ocr-json' && r.request().method() === 'POST');
  await page.click('#extract');
  assert.equal((await bySchema).status(), 200);
  await page.locator('#object:not([hidden])').waitFor();
  assert.equal(JSON.parse(await page.textContent('#object')).total, total);
  step('extraction: ' + JSON.stringify(object));

  // A file that is no image: the 415 answer reads as a sentence.
  const notes = join(out, 'notes.txt');
  writeFileSync(notes, 'This is a text file, not a picture.\n');
  await page.setInputFiles('#file', notes);
  await page.locator('#status.error').waitFor();
  const refusal = await page.textContent('#status');
  assert.match(refusal, /^415 unsupported_image_format: That file is not an image or document ocrgate can read\. \(image format not recognized/, 'the 415 is not explained');
  assert.ok(!refusal.includes('This is a text file'), 'the message echoes the file');
  step('415 explained: ' + refusal);

  // A PDF: each page drawn as boxes on a blank sheet of the page's shape, captioned with its
  // number and where its text came from; the text of every page shown.
  const docAnswer = page.waitForResponse((r) => r.url() === base + '/ocr' && r.request().method() === 'POST');
  await page.setInputFiles('#file', pdf);
  const docResp = await docAnswer;
  assert.equal(docResp.status(), 200);
  const doc = await docResp.json();
  await page.locator('#status:not(.error)', { hasText: 'Read invoice.pdf.' }).waitFor();
  assert.equal(doc.pages.length, 2, 'the API read ' + doc.pages.length + ' pages');
  assert.equal(await page.locator('#pages figure.page').count(), 2, 'the page does not show two pages');
  assert.equal(await page.locator('#pages .sheet img').count(), 0, 'a document page shows an image');
  assert.ok(await page.locator('#pdf-row').isVisible(), 'a document does not offer a searchable PDF');
  const captions = await page.locator('#pages figcaption').allTextContents();
  assert.deepEqual(captions, ['Page 1 (text-layer)', 'Page 2 (text-layer)']);
  const docRegions = doc.pages.reduce((n, p) => n + p.regions.length, 0);
  assert.equal(await page.locator('svg polygon.box').count(), docRegions, 'boxes drawn ≠ regions of the pages');
  const ratio = await page.locator('#pages .sheet').first().evaluate((el) => el.getBoundingClientRect().height / el.getBoundingClientRect().width);
  assert.ok(Math.abs(ratio - doc.pages[0].height / doc.pages[0].width) < 0.02, 'the sheet is not the page\'s shape: ' + ratio);
  const docShown = await page.textContent('#text');
  for (const k of pdfText) assert.ok(docShown.includes(k), 'the page does not show "' + k + '" from the PDF');
  assert.match(await page.textContent('#meta'), /^3 regions · .* pdf 2 pages$/);
  step('PDF: 2 pages, ' + docRegions + ' boxes, shows ' + pdfText.map((k) => '"' + k + '"').join(', '));

  // A PDF with a page that cannot be read: the other pages are drawn, that one says why.
  const partAnswer = page.waitForResponse((r) => r.url() === base + '/ocr' && r.request().method() === 'POST');
  await page.setInputFiles('#file', pdfFailing);
  const part = await (await partAnswer).json();
  await page.locator('#status:not(.error)', { hasText: 'Read failing.pdf.' }).waitFor();
  assert.equal(part.pages[1].error.code, 'degenerate_page');
  assert.equal(await page.locator('#pages figure.page').count(), 3, 'the page does not show three pages');
  assert.equal(await page.locator('#pages .sheet').count(), 2, 'a page that was not read got a sheet');
  const partCaptions = await page.locator('#pages figcaption').allTextContents();
  assert.equal(partCaptions[0], 'Page 1 (text-layer)');
  assert.match(partCaptions[1], /^Page 2 could not be read: .*page 2.* \(degenerate_page\)$/);
  assert.equal(partCaptions[2], 'Page 3 (text-layer)');
  step('PDF with a failed page: ' + partCaptions[1]);

  // A scanned PDF over the synchronous page limit: /ocr answers 413 too_many_pages, the page
  // sends it as a job and shows its pages done of total while it runs, then its pages and text.
  const refusedSync = page.waitForResponse((r) => r.url() === base + '/ocr' && r.request().method() === 'POST');
  const submitted = page.waitForResponse((r) => r.url().startsWith(base + '/jobs') && r.request().method() === 'POST');
  await page.setInputFiles('#file', scanned);
  assert.equal((await refusedSync).status(), 413);
  const jobResp = await submitted;
  assert.equal(jobResp.status(), 202, 'the job was not accepted');
  await page.locator('#job').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#job-progress').getAttribute('max'), '3', 'the progress bar is not out of the job\'s pages');
  const seen = new Set();
  for (let t0 = Date.now(); Date.now() - t0 < 300_000;) {
    // The words and the bar, read at one moment.
    const [label, bar] = await page.evaluate(() => [document.getElementById('job-label').textContent,
      String(document.getElementById('job-progress').value)]);
    const m = label.match(/^scanned\.pdf: (\d) of 3 pages read \((\w+)\)$/);
    assert.ok(m, 'the progress says ' + JSON.stringify(label));
    seen.add(m[1]);
    assert.equal(bar, m[1], 'the bar and the words differ');
    if (m[2] === 'succeeded') break;
    await page.waitForTimeout(100);
  }
  assert.ok(seen.has('3'), 'the progress never reached 3 of 3: ' + [...seen]);
  await page.locator('#status:not(.error)', { hasText: 'Read scanned.pdf as a job: 3 pages.' }).waitFor();
  assert.equal(await page.locator('#pages figure.page').count(), 3, 'the job\'s result does not show three pages');
  assert.deepEqual(await page.locator('#pages figcaption').allTextContents(), ['Page 1 (ocr)', 'Page 2 (ocr)', 'Page 3 (ocr)']);
  const jobText = await page.textContent('#text');
  for (const k of known) assert.ok(jobText.split(k).length - 1 >= 3, 'the job\'s text does not hold "' + k + '" on every page');
  assert.ok(await page.locator('#pdf-row').isHidden(), 'a job\'s result offers a searchable PDF that /ocr would refuse');
  await page.screenshot({ path: join(out, 'job.png') });
  step('scanned PDF as a job: progress seen at ' + [...seen].sort().join(', ') + ' of 3 pages, then its 3 pages');

  assert.deepEqual(errors, [], 'errors while the page ran');
  step('all checks passed');
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}

#!/usr/bin/env python3
# lang_pages.py — character F1 of page 1 of each PDF named, OCR'd by a running ocrgate with
# ocr=always and lang=ja and with the default recognizer, against pdftotext's text of the page
# (whitespace left out, NFKC, characters counted as a multiset). docs/languages.md quotes it.
#
#   OCRGATE_LANGS=ja ./bin/ocrgate serve &
#   scripts/lang_pages.py http://127.0.0.1:5000 CORPUS_DIR FILE.pdf...   (paths relative to CORPUS_DIR)
#
# Needs pdftotext (Debian's poppler-utils). Columns: file, reference characters, of them kana,
# F1 with lang=ja, F1 with lang=ch.
import json, subprocess, sys, urllib.request, collections, unicodedata
server, corpus, files = sys.argv[1].rstrip('/'), sys.argv[2], sys.argv[3:]
def clean(s):
    return [c for c in unicodedata.normalize('NFKC',s) if not c.isspace()]
def f1(ref,hyp):
    r=collections.Counter(ref); h=collections.Counter(hyp)
    tp=sum((r&h).values())
    if not ref or not hyp: return 0.0
    p=tp/sum(h.values()); rc=tp/sum(r.values())
    return 0 if tp==0 else 2*p*rc/(p+rc)
def ocr(path,lang):
    data=open(corpus+'/'+path,'rb').read()
    q='ocr=always&pages=1'+('&lang='+lang if lang!='ch' else '')
    req=urllib.request.Request(server+'/ocr?'+q,data=data,headers={'Content-Type':'application/pdf'})
    try:
        with urllib.request.urlopen(req,timeout=120) as r: ans=json.load(r)
    except Exception as e:
        return None, str(e)[:60]
    txt=[]
    def walk(o):
        if isinstance(o,dict):
            if 'regions' in o:
                for g in o['regions']:
                    if isinstance(g,dict): txt.append(g.get('text',''))
            for k,v in o.items():
                if k!='regions': walk(v)
        elif isinstance(o,list):
            for v in o: walk(v)
    walk(ans)
    return ''.join(txt), None
tot={'ja':[], 'ch':[]}
for f in files:
    ref=subprocess.run(['pdftotext','-f','1','-l','1',corpus+'/'+f,'-'],capture_output=True,text=True).stdout
    refc=clean(ref)
    kana=sum(1 for c in refc if '\u3040'<=c<='\u30ff')
    cjk=sum(1 for c in refc if '\u3040'<=c<='\u30ff' or '\u4e00'<=c<='\u9fff')
    row=[f, len(refc), kana]
    for lang in ['ja','ch']:
        t,err=ocr(f,lang)
        if t is None: row.append('err:'+err); continue
        v=f1(refc,clean(t)); row.append('%.3f'%v)
        if kana>0: tot[lang].append((v,len(refc),f))
    print('\t'.join(map(str,row)),flush=True)
# Pages with kana in their layer; those no recognizer read a character of (a render without the
# glyphs: fonts not embedded) are left out of the second line.
blank={f for lang in tot for x,_,f in tot[lang]}
for lang in tot:
    for x,_,f in tot[lang]:
        if x>0: blank.discard(f)
for lang,v in tot.items():
    if not v: continue
    print(lang,'pages',len(v),'mean char F1 %.3f'%(sum(x for x,_,_ in v)/len(v)))
    w=[(x,n) for x,n,f in v if f not in blank]
    print(lang,'rendered pages',len(w),'mean char F1 %.3f'%(sum(x for x,_ in w)/len(w)),'character-weighted %.3f'%(sum(x*n for x,n in w)/sum(n for _,n in w)))

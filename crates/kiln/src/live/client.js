// kiln's live views, the page's side: served as is (no build step) by every app with a
// live view. The wire format is in crates/kiln/src/live/mod.rs; the page's copy of a
// view (Replica) follows crates/kiln/src/live/replica.rs, the format's reference.
(() => {
  "use strict";
  const PROTOCOL = "kiln-live";
  // How long an `input` event waits for the next keystroke (data-kiln-debounce: ms).
  const DEBOUNCE = 300;
  // Reconnection delays: doubling from the first to the last, with jitter.
  const BACKOFF_FIRST = 250;
  const BACKOFF_LAST = 10000;

  // The view as the page holds it: statics by fingerprint, and the tree of slots.
  class Replica {
    constructor() {
      this.statics = new Map();
      this.root = null;
    }

    apply(message) {
      this.root = this.root === null ? this.rendered(message) : this.patch(this.root, message);
    }

    html() {
      const out = [];
      this.render(this.root, out);
      return out.join("");
    }

    parts(f) {
      const parts = this.statics.get(f);
      if (!parts) throw new Error("no statics for " + f);
      return parts;
    }

    rendered(json) {
      if (typeof json === "string") return json;
      if (json.s) this.statics.set(json.f, json.s);
      if ("d" in json) return { f: json.f, items: this.items(json) };
      const slots = [];
      for (let i = 0; i < this.parts(json.f).length - 1; i++) slots.push(this.rendered(json[i]));
      return { f: json.f, slots };
    }

    items(json) {
      const keys = json.k || [];
      return json.d.map((slots, i) => ({ key: i < keys.length ? keys[i] : null, slots: slots.map((s) => this.rendered(s)) }));
    }

    patch(node, json) {
      if (typeof json === "string" || "f" in json) return this.rendered(json);
      if (node.slots) {
        this.patchSlots(node.slots, json);
      } else if ("d" in json) {
        node.items = this.items(json);
      } else {
        this.patchKeyed(node.items, json);
      }
      return node;
    }

    // A leaf message, `3.42.2=text`: the text slot at that path (slot 3, the item
    // keyed 42, its slot 2) is now everything after the first `=`.
    leaf(message) {
      const eq = message.indexOf("=");
      const steps = message.slice(0, eq).split(".");
      let slots = this.root.slots;
      for (let s = 0; s < steps.length - 1; s++) {
        const node = slots[steps[s]];
        if (!node || typeof node === "string") throw new Error("no slot " + steps[s]);
        if (node.slots) {
          slots = node.slots;
          continue;
        }
        const key = steps[++s];
        const item = node.items.find((item) => item.key === key);
        if (!item) throw new Error("no item " + key);
        slots = item.slots;
      }
      if (typeof slots[steps[steps.length - 1]] !== "string") throw new Error("no text slot " + message.slice(0, eq));
      slots[steps[steps.length - 1]] = message.slice(eq + 1);
    }

    patchSlots(slots, json) {
      for (const i in json) slots[i] = this.patch(slots[i], json[i]);
    }

    // Removes, then inserts and moves in order (each after the item keyed `after`,
    // null: first), then updates items by key.
    patchKeyed(items, json) {
      const at = (key) => {
        const i = items.findIndex((item) => item.key === key);
        if (i < 0) throw new Error("no item " + key);
        return i;
      };
      for (const key of json.r || []) items.splice(at(key), 1);
      for (const [op, key, after, slots] of json.o || []) {
        const item = op === "i" ? { key, slots: slots.map((s) => this.rendered(s)) } : items.splice(at(key), 1)[0];
        items.splice(after === null ? 0 : at(after) + 1, 0, item);
      }
      for (const key in json.u || {}) this.patchSlots(items[at(key)].slots, json.u[key]);
    }

    render(node, out) {
      if (typeof node === "string") return out.push(node);
      const parts = this.parts(node.f);
      for (const item of node.items || [node]) {
        const at = out.length;
        out.push(parts[0]);
        item.slots.forEach((slot, i) => {
          this.render(slot, out);
          out.push(parts[i + 1]);
        });
        if (item.key !== null && item.key !== undefined) out.splice(at, out.length - at, keyed(out.slice(at).join(""), item.key));
      }
    }
  }

  // An item of a keyed list, its first element marked with its key, so that the
  // morph moves that element where the item moves (the server's markup is unchanged).
  function keyed(html, key) {
    const escaped = String(key).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
    return html.replace(/^([^<]*<[A-Za-z][^\s/>]*)/, '$1 data-kiln-key="' + escaped + '"');
  }

  function keyOf(node) {
    return node.nodeType === 1 ? node.getAttribute("data-kiln-key") : null;
  }

  // Brings the children of `from` (the page) to those of `to` (the new rendering) in
  // place: text and attributes patched, elements kept where their tag (and id) match,
  // so that the focused field keeps its value and caret and the page its scroll.
  function morph(from, to) {
    let old = from.firstChild;
    // The keyed elements of `from`, by key: found wherever they stand, then moved.
    let keys = null;
    for (let next = to.firstChild; next; ) {
      const following = next.nextSibling;
      const key = keyOf(next);
      if (key !== null) {
        if (keys === null) {
          keys = new Map();
          for (const el of from.children) if (keyOf(el) !== null) keys.set(keyOf(el), el);
        }
        const match = keys.get(key);
        if (match && match.parentNode === from && match.nodeName === next.nodeName) {
          if (match === old) old = old.nextSibling;
          else from.insertBefore(match, old);
          update(match, next);
        } else if (old && keyOf(old) === null && old.nodeName === next.nodeName && old.id === next.id) {
          // The first answer's markup has no keys: its element takes the key.
          update(old, next);
          old = old.nextSibling;
        } else {
          from.insertBefore(next, old);
        }
      } else if (!old) {
        from.appendChild(next);
      } else if (old.nodeType === next.nodeType && old.nodeName === next.nodeName && old.id === next.id) {
        update(old, next);
        old = old.nextSibling;
      } else {
        const kept = next.nodeType === 1 && next.id ? later(old, next) : null;
        if (kept) {
          // The element with this id is further on: what stands before it goes.
          while (old !== kept) {
            const gone = old;
            old = old.nextSibling;
            from.removeChild(gone);
          }
          update(old, next);
          old = old.nextSibling;
        } else if (old.nodeType === 1 && old.id) {
          // An element with an id (a form being typed in) waits for its match: what
          // comes before it now is inserted, so that it is never replaced.
          from.insertBefore(next, old);
        } else {
          const replaced = old;
          old = old.nextSibling;
          from.replaceChild(next, replaced);
        }
      }
      next = following;
    }
    while (old) {
      const gone = old;
      old = old.nextSibling;
      from.removeChild(gone);
    }
  }

  // The sibling of `old` (or `old`) that is `next`'s element: same tag and id.
  function later(old, next) {
    for (let el = old; el; el = el.nextSibling) {
      if (el.nodeType === 1 && el.id === next.id && el.nodeName === next.nodeName) return el;
    }
    return null;
  }

  function update(el, to) {
    if (el.nodeType !== 1) {
      if (el.nodeValue !== to.nodeValue) el.nodeValue = to.nodeValue;
      return;
    }
    const focused = el === document.activeElement;
    for (const { name, value } of Array.from(to.attributes)) {
      if (el.getAttribute(name) !== value && !(focused && name === "value")) el.setAttribute(name, value);
    }
    for (const { name } of Array.from(el.attributes)) if (!to.hasAttribute(name)) el.removeAttribute(name);
    if (el.nodeName === "TEXTAREA") {
      if (!focused && el.value !== to.value) el.value = to.value;
      return;
    }
    morph(el, to);
    if (focused) return;
    if (el.nodeName === "INPUT") {
      if (el.value !== to.value) el.value = to.value;
      el.checked = to.checked;
    } else if (el.nodeName === "SELECT") {
      el.selectedIndex = to.selectedIndex;
    }
  }

  function parse(html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  }

  // A form event's fields: its form's, or the field's own name and value.
  function fields(el) {
    const form = el.nodeName === "FORM" ? el : el.form;
    if (form) return new URLSearchParams(new FormData(form)).toString();
    return el.name ? new URLSearchParams([[el.name, el.value]]).toString() : "";
  }

  // Whether this page's views use the event stream: set once a WebSocket failed to
  // open and a stream did (a proxy that blocks WebSocket), so later reconnections of
  // every view of the page skip the socket.
  let streamed = false;

  class View {
    constructor(root, index) {
      this.root = root;
      this.index = index;
      this.token = root.getAttribute("data-kiln-token");
      // A view embedded in a page of the app's own has its socket on its own route.
      this.path = root.getAttribute("data-kiln-path");
      // `data-kiln-transport="sse"` on the container or around it (`<body>`): a site
      // known to be behind a proxy that blocks WebSocket.
      const transport = root.closest("[data-kiln-transport]");
      this.forced = transport !== null && transport.getAttribute("data-kiln-transport") === "sse";
      // The open connection: a socket or a stream, with `send(json)`.
      this.link = null;
      this.tries = 0;
      this.timers = new Map();
      this.state(false);
      this.listen();
      this.connect();
    }

    state(connected) {
      this.root.classList.toggle("kiln-connected", connected);
      this.root.classList.toggle("kiln-disconnected", !connected);
    }

    url() {
      return this.path || location.pathname + location.search;
    }

    connect() {
      if (this.forced || streamed) return this.stream(false);
      const scheme = location.protocol === "https:" ? "wss://" : "ws://";
      const ws = new WebSocket(scheme + location.host + this.url(), [PROTOCOL, this.token]);
      const link = { replica: null, send: (json) => ws.readyState === WebSocket.OPEN && ws.send(json) };
      let opened = false;
      ws.onopen = () => (opened = true);
      ws.onmessage = (e) => this.receive(link, e.data);
      ws.onclose = () => {
        if (this.link !== link) return;
        this.link = null;
        // Never opened: perhaps a proxy refuses WebSocket. The stream is tried at once.
        if (!opened) return this.stream(true);
        this.closed(link);
      };
      this.link = link;
    }

    // The view over an event stream: its messages come on a `text/event-stream`
    // response, its events go as POSTs naming the stream (in order, one at a time).
    stream(trial) {
      const abort = new AbortController();
      const headers = { "Kiln-Live-Token": this.token };
      let id = null;
      let sending = Promise.resolve();
      const link = {
        replica: null,
        send: (json) => {
          if (id === null) return;
          const post = { method: "POST", credentials: "same-origin", body: json };
          post.headers = Object.assign({ "Kiln-Live-Stream": id, "Content-Type": "application/json" }, headers);
          sending = sending
            .then(() => fetch(this.url(), post))
            // A stream this process no longer has (it ended, or the server changed).
            .then((res) => res.status === 404 && abort.abort())
            .catch(() => {});
        },
      };
      this.link = link;
      const get = { headers: Object.assign({ Accept: "text/event-stream" }, headers), credentials: "same-origin" };
      fetch(this.url(), Object.assign(get, { cache: "no-store", signal: abort.signal }))
        .then(async (res) => {
          if (!res.ok || !res.body) return;
          if (trial) streamed = true;
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          let text = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done || this.link !== link) return;
            text += value;
            // The server ends each event with a blank line and each line with LF.
            for (let end; (end = text.indexOf("\n\n")) >= 0; ) {
              let type = "message";
              const data = [];
              for (const line of text.slice(0, end).split("\n")) {
                if (line.startsWith("event: ")) type = line.slice(7);
                if (line.startsWith("data: ")) data.push(line.slice(6));
              }
              text = text.slice(end + 2);
              if (type === "kiln-stream") id = data.join("\n");
              else if (type === "message" && data.length) this.receive(link, data.join("\n"));
            }
          }
        })
        .catch(() => {})
        .finally(() => {
          abort.abort();
          if (this.link !== link) return;
          this.link = null;
          this.closed(link);
        });
    }

    // A message of the server on `link`: the first is the mount message (a fresh
    // view: the server mounted it again), then diffs.
    receive(link, data) {
      if (this.link !== link) return;
      // A leaf message (`path=text`) never starts with `{`; every other one is JSON.
      const leaf = data[0] !== "{";
      const message = leaf ? data : JSON.parse(data);
      if (message.error !== undefined) return console.warn("kiln live: " + message.error);
      if (link.replica === null) {
        if (leaf) return;
        link.replica = new Replica();
        this.tries = 0;
        this.state(true);
      }
      if (leaf) link.replica.leaf(message);
      else link.replica.apply(message);
      // A focused element that moves (in a keyed row) is taken out and put back,
      // which blurs it: it gets its focus and selection back.
      const focused = document.activeElement;
      const range = focused && typeof focused.selectionStart === "number" ? [focused.selectionStart, focused.selectionEnd] : null;
      morph(this.root, parse(link.replica.html()));
      if (focused && focused !== document.activeElement && focused.isConnected && this.root.contains(focused)) {
        focused.focus({ preventScroll: true });
        if (range) focused.setSelectionRange(range[0], range[1]);
      }
    }

    // `link` has ended: reconnect after a backoff. One refused before its mount may
    // hold an expired token: a fresh one is fetched first.
    closed(link) {
      this.state(false);
      const delay = Math.min(BACKOFF_LAST, BACKOFF_FIRST * 2 ** this.tries++) * (0.5 + Math.random() / 2);
      setTimeout(() => (link.replica === null ? this.refresh() : this.connect()), delay);
    }

    refresh() {
      fetch(location.href, { credentials: "same-origin" })
        .then((res) => res.text())
        .then((text) => {
          const fresh = new DOMParser().parseFromString(text, "text/html").querySelectorAll("[data-kiln-live]")[this.index];
          if (fresh) this.token = fresh.getAttribute("data-kiln-token");
        })
        .catch(() => {})
        .finally(() => this.connect());
    }

    send(event, form) {
      if (this.link) this.link.send(JSON.stringify(form === undefined ? { event } : { event, form }));
    }

    // The element inside this view, at or above the event's target, naming `name`.
    named(e, name) {
      const el = e.target.closest && e.target.closest("[data-kiln-" + name + "]");
      return el && this.root.contains(el) ? el : null;
    }

    listen() {
      const value = (type, name = type) => {
        this.root.addEventListener(type, (e) => {
          const el = this.named(e, name);
          if (!el) return;
          if (type === "click") e.preventDefault();
          this.send(JSON.parse(el.getAttribute("data-kiln-" + name)));
        });
      };
      value("click");
      value("keydown");
      value("keyup");
      value("focusin", "focus");
      value("focusout", "blur");
      const form = (type) => {
        this.root.addEventListener(type, (e) => {
          const el = this.named(e, type);
          if (!el) return;
          if (type === "submit") e.preventDefault();
          const send = () => this.send(el.getAttribute("data-kiln-" + type), fields(el));
          if (type === "submit" && el.hasAttribute("data-kiln-reset")) {
            // Sent, then emptied: the server cannot empty the focused field itself.
            send();
            return el.reset();
          }
          if (type !== "input") return send();
          clearTimeout(this.timers.get(el));
          const wait = Number(el.getAttribute("data-kiln-debounce") || DEBOUNCE);
          this.timers.set(el, setTimeout(send, wait));
        });
      };
      form("submit");
      form("change");
      form("input");
    }
  }

  document.querySelectorAll("[data-kiln-live]").forEach((root, i) => new View(root, i));
})();

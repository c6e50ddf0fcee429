// A minimal W3C WebDriver client over fetch (Node 18+): enough to drive the
// studio's real window through tauri-driver and WebKitWebDriver.
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export class WebDriver {
  constructor(base = "http://127.0.0.1:4444") {
    this.base = base;
    this.session = null;
  }

  async request(method, path, body) {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(method === "POST" && path.endsWith("/execute/async") ? 60000 : 30000),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) {
      const v = json.value ?? {};
      throw new Error(`${method} ${path}: ${res.status} ${v.error ?? ""} ${v.message ?? JSON.stringify(json)}`);
    }
    return json.value;
  }

  s(path) {
    return `/session/${this.session}${path}`;
  }

  async start(application, env = {}) {
    const v = await this.request("POST", "/session", {
      capabilities: { alwaysMatch: { "tauri:options": { application, env } } },
    });
    this.session = v.sessionId;
    return v;
  }

  async quit() {
    if (!this.session) return;
    await this.request("DELETE", `/session/${this.session}`).catch(() => {});
    this.session = null;
  }

  /** Presses keys as a person would, to whatever has the focus: `["Control", "Enter"]`
   * holds each until the last is pressed. Key names: W3C WebDriver's. */
  async press(...names) {
    const code = { Control: "\uE009", Enter: "\uE007", Escape: "\uE00C", Delete: "\uE017" };
    const keys = names.map((n) => code[n] ?? n);
    const actions = [...keys.map((value) => ({ type: "keyDown", value })), ...keys.reverse().map((value) => ({ type: "keyUp", value }))];
    await this.request("POST", this.s("/actions"), { actions: [{ type: "key", id: "keyboard", actions }] });
    await this.request("DELETE", this.s("/actions")).catch(() => {});
  }

  async find(css) {
    const v = await this.request("POST", this.s("/element"), { using: "css selector", value: css });
    return v[ELEMENT];
  }

  async findAll(css) {
    const v = await this.request("POST", this.s("/elements"), { using: "css selector", value: css });
    return v.map((e) => e[ELEMENT]);
  }

  async click(css) {
    const id = await this.waitFor(css);
    // Centred first, as a person scrolls to it: WebKit's driver scrolls an
    // element only to the viewport's edge, where the wizard's sticky footer
    // can cover it ("element click intercepted").
    await this.request("POST", this.s("/execute/sync"), {
      script: "arguments[0].scrollIntoView({ block: 'center' });",
      args: [{ [ELEMENT]: id }],
    });
    await this.request("POST", this.s(`/element/${id}/click`), {});
  }

  // A controlled field can put its old value back between the clear and the
  // keys when the page re-renders (seen under load: "6432" for "32"), so a
  // cleared field is checked and typed again, a few times at most.
  async type(css, text, { clear = true } = {}) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const id = await this.waitFor(css);
      if (clear) await this.request("POST", this.s(`/element/${id}/clear`), {});
      await this.request("POST", this.s(`/element/${id}/value`), { text });
      if (!clear) return;
      const value = await this.exec("return document.querySelector(arguments[0]).value", css);
      if (value === text) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async text(css) {
    const id = await this.waitFor(css);
    return this.request("GET", this.s(`/element/${id}/text`));
  }

  async exec(script, ...args) {
    return this.request("POST", this.s("/execute/sync"), { script, args });
  }

  async execAsync(script, ...args) {
    return this.request("POST", this.s("/execute/async"), { script, args });
  }

  /** Polls until `css` matches (and `check(element text)` holds, if given). */
  async waitFor(css, { timeout = 30000, check = null, what = css } = {}) {
    const end = Date.now() + timeout;
    let last = "";
    for (;;) {
      try {
        const id = await this.find(css);
        if (!check) return id;
        last = await this.request("GET", this.s(`/element/${id}/text`));
        if (check(last)) return id;
      } catch (e) {
        last = String(e.message ?? e);
      }
      if (Date.now() > end) throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last.slice(0, 300)})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/* The hcgraph SPARQL workbench: YASGUI pointed at this server's /query, nothing else.
 *
 * Everything that could reach another host is switched off here, and the page's
 * Content-Security-Policy (connect-src 'self') refuses whatever was missed:
 *   - the LOV autocompleters ("property", "class") are unregistered; prefixes come from the
 *     list bundled in YASGUI (prefixCcApi stays unset), variables from the query itself;
 *   - no endpoint catalogue (DBpedia, Wikidata), no endpoint taken from the URL, and every
 *     tab, new or restored from this browser's local storage, queries this server;
 *   - no CORS proxy, no share-link shortener.
 * The saved queries come from a JSON block of the page (data, never executed).
 */
(function () {
  "use strict";
  var endpoint = new URL("query", window.location.href).href;
  var queries = JSON.parse(document.getElementById("hc-queries").textContent);

  var Yasqe = Yasgui.Yasqe;
  ["property", "class"].forEach(function (name) { delete Yasqe.Autocompleters[name]; });
  var keep = ["prefixes", "variables"];
  var defaults = Yasqe.defaults.autocompleters;
  defaults.splice(0, defaults.length);
  keep.forEach(function (name) { if (Yasqe.Autocompleters[name]) defaults.push(name); });

  var requestConfig = { endpoint: endpoint, method: "POST" };
  var yasgui = new Yasgui(document.getElementById("yasgui"), {
    requestConfig: requestConfig,
    copyEndpointOnNewTab: false,
    populateFromUrl: false,
    persistenceId: "hcgraph-workbench",
    corsProxy: undefined,
    endpointCatalogueOptions: { getData: function () { return []; }, keys: [] },
    yasqe: { autocompleters: keep.slice(), prefixCcApi: null, createShortLink: undefined },
  });
  function pin(tab) {
    if (tab && tab.getEndpoint && tab.getEndpoint() !== endpoint) tab.setEndpoint(endpoint);
  }
  Object.keys(yasgui._tabs || {}).forEach(function (id) { pin(yasgui._tabs[id]); });
  yasgui.on("tabAdd", function (y, id) { pin(yasgui.getTab(id)); });
  yasgui.on("tabSelect", function (y, id) { window.setTimeout(function () { pin(yasgui.getTab(id)); }, 0); });
  document.getElementById("hc-endpoint").textContent = endpoint;

  var select = document.getElementById("hc-example");
  queries.forEach(function (q) {
    var option = document.createElement("option");
    option.value = q.name;
    option.textContent = q.name + " \u2014 " + q.title;
    option.title = q.question;
    select.appendChild(option);
  });
  select.addEventListener("change", function () {
    var q = queries.filter(function (item) { return item.name === select.value; })[0];
    var about = document.getElementById("hc-about");
    if (!q) { about.hidden = true; return; }
    document.getElementById("hc-title").textContent = q.name + ": " + q.title;
    document.getElementById("hc-question").textContent = q.question;
    var params = document.getElementById("hc-params");
    params.textContent = "";
    q.params.forEach(function (p) {
      var li = document.createElement("li");
      li.textContent = "?" + p.name + " (" + p.type + (p.default === null ? ", required" :
        ", default " + p.default) + "): " + p.description +
        " \u2014 bind it in the query (e.g. VALUES) before running";
      params.appendChild(li);
    });
    about.hidden = false;
    var tab = yasgui.getTab();
    pin(tab);
    tab.setQuery(q.text);
  });
  window.hcWorkbench = { yasgui: yasgui, endpoint: endpoint, queries: queries };
})();

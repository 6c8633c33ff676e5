"""Support services and their problem classifications (spec 1 §2.9, §4.7).

``GET /providers/{ns}.Support/services`` lists the services a ticket can be opened for;
``GET /providers/{ns}.Support/services/{serviceName}/problemClassifications`` lists one
service's classifications, paged with ``nextLink``. Service and classification names are GUIDs
(clients discover them, never hard-code them). ``displayName`` and the consent texts are
localized by ``Accept-Language`` (English, German and French; anything else gets English, as the
real service does). Classifications of partner services carry ``secondaryConsentEnabled``.
The services are not in the sandbox catalog: :func:`toolkit.support_services` discovers them, as
a client of the real service must.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from toolkit._spec.arm import NEXT_KEY, SUPPORT_API_VERSIONS
from toolkit.sandbox.arm.common import arm_reply
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

__all__ = ["API_VERSIONS", "LANGUAGES", "PAGE_SIZE", "SupportWorld", "build_world", "register"]

API_VERSIONS = SUPPORT_API_VERSIONS
PAGE_SIZE = 10
LANGUAGES = ("en", "de", "fr")

# Text is (English, German, French).
T = tuple[str, str, str]

#: area -> (area text, [problem texts])
_AREAS: dict[str, tuple[T, list[T]]] = {
    "connectivity": (("Connectivity", "Konnektivität", "Connectivité"), [
        ("Cannot connect", "Verbindung nicht möglich", "Connexion impossible"),
        ("Intermittent timeouts", "Zeitweilige Zeitüberschreitungen",
         "Délais d'attente intermittents"),
        ("DNS resolution failures", "Fehler bei der DNS-Auflösung",
         "Échecs de résolution DNS"),
        ("Private endpoint issues", "Probleme mit privatem Endpunkt",
         "Problèmes de point de terminaison privé"),
    ]),
    "performance": (("Performance", "Leistung", "Performances"), [
        ("Slow response times", "Langsame Antwortzeiten", "Temps de réponse lents"),
        ("High CPU usage", "Hohe CPU-Auslastung", "Utilisation élevée du processeur"),
        ("Throttling (429 errors)", "Drosselung (429-Fehler)", "Limitation (erreurs 429)"),
        ("Memory pressure", "Speicherengpässe", "Pression sur la mémoire"),
    ]),
    "configuration": (("Configuration and setup", "Konfiguration und Einrichtung",
                       "Configuration et installation"), [
        ("Cannot create resource", "Ressource kann nicht erstellt werden",
         "Impossible de créer la ressource"),
        ("Settings not applied", "Einstellungen werden nicht übernommen",
         "Paramètres non appliqués"),
        ("Quota increase", "Kontingenterhöhung", "Augmentation de quota"),
    ]),
    "backup": (("Backup and restore", "Sicherung und Wiederherstellung",
                "Sauvegarde et restauration"), [
        ("Restore failed", "Wiederherstellung fehlgeschlagen", "Échec de la restauration"),
        ("Backup job failed", "Sicherungsauftrag fehlgeschlagen",
         "Échec du travail de sauvegarde"),
        ("Retention policy questions", "Fragen zur Aufbewahrungsrichtlinie",
         "Questions sur la stratégie de rétention"),
    ]),
    "security": (("Security and access", "Sicherheit und Zugriff", "Sécurité et accès"), [
        ("Access denied", "Zugriff verweigert", "Accès refusé"),
        ("Key and certificate management", "Schlüssel- und Zertifikatverwaltung",
         "Gestion des clés et des certificats"),
        ("Encryption configuration", "Verschlüsselungskonfiguration",
         "Configuration du chiffrement"),
        ("Suspicious activity", "Verdächtige Aktivität", "Activité suspecte"),
    ]),
    "monitoring": (("Monitoring and alerts", "Überwachung und Warnungen",
                    "Surveillance et alertes"), [
        ("Missing metrics or logs", "Fehlende Metriken oder Protokolle",
         "Métriques ou journaux manquants"),
        ("Alerts not firing", "Warnungen werden nicht ausgelöst",
         "Les alertes ne se déclenchent pas"),
    ]),
    "scaling": (("Scaling", "Skalierung", "Mise à l'échelle"), [
        ("Autoscale not working", "Automatische Skalierung funktioniert nicht",
         "La mise à l'échelle automatique ne fonctionne pas"),
        ("Cannot scale up or down", "Hoch- oder Herunterskalieren nicht möglich",
         "Impossible d'augmenter ou de réduire la taille"),
    ]),
    "deployment": (("Deployment", "Bereitstellung", "Déploiement"), [
        ("Deployment failed", "Bereitstellung fehlgeschlagen", "Échec du déploiement"),
        ("Upgrade failed", "Upgrade fehlgeschlagen", "Échec de la mise à niveau"),
        ("Rollback needed", "Rollback erforderlich", "Restauration nécessaire"),
    ]),
    "data": (("Data and storage", "Daten und Speicher", "Données et stockage"), [
        ("Data loss or corruption", "Datenverlust oder -beschädigung",
         "Perte ou corruption de données"),
        ("Storage full", "Speicher voll", "Stockage plein"),
        ("Replication lag", "Replikationsverzögerung", "Retard de réplication"),
    ]),
    "cluster": (("Cluster management", "Clusterverwaltung", "Gestion du cluster"), [
        ("Nodes not ready", "Knoten nicht bereit", "Nœuds non prêts"),
        ("Cannot get cluster credentials", "Clusteranmeldeinformationen nicht abrufbar",
         "Impossible d'obtenir les informations d'identification du cluster"),
        ("Node pool upgrade stuck", "Knotenpool-Upgrade hängt",
         "Mise à niveau du pool de nœuds bloquée"),
        ("Pods cannot pull images", "Pods können keine Images abrufen",
         "Les pods ne peuvent pas extraire les images"),
    ]),
    "reservations": (("Reservation Management", "Reservierungsverwaltung",
                      "Gestion des réservations"), [
        ("Exchanges and Refunds", "Umtausch und Erstattungen", "Échanges et remboursements"),
        ("Request Invoices", "Rechnungen anfordern", "Demander des factures"),
        ("Other Issues or Requests", "Andere Probleme oder Anfragen",
         "Autres problèmes ou demandes"),
    ]),
    "invoices": (("Invoices and payments", "Rechnungen und Zahlungen", "Factures et paiements"), [
        ("Payment failed", "Zahlung fehlgeschlagen", "Échec du paiement"),
        ("Unexpected charges", "Unerwartete Gebühren", "Frais inattendus"),
        ("Change payment method", "Zahlungsmethode ändern", "Changer de moyen de paiement"),
    ]),
    "workspace": (("Partner workspace", "Partner-Arbeitsbereich", "Espace de travail partenaire"), [
        ("Workspace unavailable", "Arbeitsbereich nicht verfügbar",
         "Espace de travail indisponible"),
        ("Jobs failing", "Aufträge schlagen fehl", "Échec des travaux"),
        ("Notebook or library issues", "Probleme mit Notebooks oder Bibliotheken",
         "Problèmes de notebooks ou de bibliothèques"),
    ]),
}

#: The hosted-cluster resource type, named by the cloud's words (its provider is not the
#: namespace word followed by a service word).
_HOSTED = "{hosted}"

#: consent type -> description (en, de, fr); "Vendor" is the cloud's company word
#: (its namespace word).
_CONSENTS: dict[str, T] = {
    "PartnerConsent": (
        "For faster resolution, allow Vendor and Partner to temporarily have read and write "
        "access to your Partner workspace. We will only access to read and write to your cluster "
        "for the purpose of resolving your support issue and in conformance with Vendor's "
        "Privacy Policy.",
        "Erlauben Sie Vendor und Partner für eine schnellere Lösung vorübergehend Lese- und "
        "Schreibzugriff auf Ihren Partner-Arbeitsbereich. Wir greifen nur zur Lösung Ihres "
        "Supportproblems und gemäß der Datenschutzrichtlinie von Vendor auf Ihren Cluster zu.",
        "Pour une résolution plus rapide, autorisez Vendor et Partner à accéder temporairement "
        "en lecture et en écriture à votre espace de travail Partner. Nous n'accéderons à votre "
        "cluster que pour résoudre votre problème, conformément à la politique de "
        "confidentialité de Vendor.",
    ),
    "MarketplacePartnerConsent": (
        "Allow Vendor to share the details of this request with the publisher of your "
        "marketplace solution, so that the publisher can help resolve it.",
        "Erlauben Sie Vendor, die Details dieser Anfrage mit dem Herausgeber Ihrer "
        "Marketplace-Lösung zu teilen, damit dieser bei der Lösung helfen kann.",
        "Autorisez Vendor à partager les détails de cette demande avec l'éditeur de votre "
        "solution de la place de marché, afin qu'il puisse aider à la résoudre.",
    ),
}

# (display name (en, de, fr), resource types, areas, consent type its classifications need or
# None)
_SERVICES: tuple[tuple[T, tuple[str, ...], tuple[str, ...], str | None], ...] = (
    (("Virtual Machine running Linux", "Virtueller Computer unter Linux",
      "Machine virtuelle exécutant Linux"), ("Compute/virtualMachines",),
     ("connectivity", "performance", "configuration", "backup", "deployment"), None),
    (("Virtual Machine running Windows", "Virtueller Computer unter Windows",
      "Machine virtuelle exécutant Windows"), ("Compute/virtualMachines",),
     ("connectivity", "performance", "configuration", "backup", "security"), None),
    (("Virtual Machine Scale Sets", "VM-Skalierungsgruppen",
      "Groupes de machines virtuelles identiques"), ("Compute/virtualMachineScaleSets",),
     ("scaling", "deployment", "performance"), None),
    (("Managed Kubernetes Service", "Verwalteter Kubernetes-Dienst",
      "Service Kubernetes managé"), ("ContainerService/managedClusters",),
     ("cluster", "connectivity", "scaling", "deployment", "security", "monitoring"), None),
    (("Hosted OpenShift Clusters", "Gehostete OpenShift-Cluster",
      "Clusters OpenShift hébergés"), (_HOSTED,),
     ("cluster", "deployment", "security"), "PartnerConsent"),
    (("Container Registry", "Containerregistrierung", "Registre de conteneurs"),
     ("ContainerRegistry/registries",), ("connectivity", "security", "data"), None),
    (("Container Instances", "Containerinstanzen", "Instances de conteneur"),
     ("ContainerInstance/containerGroups",), ("deployment", "performance"), None),
    (("SQL Database", "SQL-Datenbank", "Base de données SQL"),
     ("Sql/servers", "Sql/servers/databases"),
     ("connectivity", "performance", "backup", "security", "scaling", "data"), None),
    (("SQL Managed Instance", "Verwaltete SQL-Instanz", "Instance managée SQL"),
     ("Sql/managedInstances",), ("connectivity", "performance", "backup", "security"), None),
    (("Database for PostgreSQL", "Datenbank für PostgreSQL", "Base de données pour PostgreSQL"),
     ("DBforPostgreSQL/flexibleServers",),
     ("connectivity", "performance", "backup", "data"), None),
    (("Database for MySQL", "Datenbank für MySQL", "Base de données pour MySQL"),
     ("DBforMySQL/flexibleServers",), ("connectivity", "performance", "backup"), None),
    (("Cosmos Document Database", "Cosmos-Dokumentdatenbank", "Base de données Cosmos"),
     ("DocumentDB/databaseAccounts",), ("performance", "data", "backup", "security"), None),
    (("Cache for Redis", "Cache für Redis", "Cache pour Redis"), ("Cache/redis",),
     ("connectivity", "performance", "scaling"), None),
    (("Storage Account Management", "Speicherkontoverwaltung",
      "Gestion des comptes de stockage"), ("Storage/storageAccounts",),
     ("connectivity", "security", "data", "configuration"), None),
    (("Blob Storage", "Blob Storage", "Stockage Blob"), ("Storage/storageAccounts",),
     ("performance", "data", "backup"), None),
    (("File Storage", "Dateispeicher", "Stockage de fichiers"), ("Storage/storageAccounts",),
     ("connectivity", "performance", "backup"), None),
    (("Data Lake Storage", "Data Lake Storage", "Stockage Data Lake"),
     ("Storage/storageAccounts",), ("security", "data", "performance"), None),
    (("Virtual Network", "Virtuelles Netzwerk", "Réseau virtuel"),
     ("Network/virtualNetworks",), ("connectivity", "configuration"), None),
    (("Application Gateway", "Application Gateway", "Passerelle d'application"),
     ("Network/applicationGateways",),
     ("connectivity", "performance", "configuration", "security", "monitoring"), None),
    (("Load Balancer", "Lastenausgleich", "Équilibreur de charge"),
     ("Network/loadBalancers",), ("connectivity", "configuration"), None),
    (("VPN Gateway", "VPN-Gateway", "Passerelle VPN"), ("Network/virtualNetworkGateways",),
     ("connectivity", "performance", "configuration"), None),
    (("DNS", "DNS", "DNS"), ("Network/dnsZones",), ("connectivity", "configuration"), None),
    (("Firewall", "Firewall", "Pare-feu"), ("Network/azureFirewalls",),
     ("connectivity", "security", "configuration"), None),
    (("Front Door and CDN", "Front Door und CDN", "Front Door et CDN"),
     ("Cdn/profiles",), ("performance", "configuration", "security"), None),
    (("App Service Web Apps", "App Service-Web-Apps", "Applications web App Service"),
     ("Web/sites",), ("deployment", "performance", "connectivity", "scaling"), None),
    (("Functions", "Functions", "Functions"), ("Web/sites",),
     ("deployment", "performance", "scaling", "monitoring"), None),
    (("Key Vault", "Key Vault", "Coffre de clés"), ("KeyVault/vaults",),
     ("security", "connectivity", "backup"), None),
    (("Policy", "Richtlinie", "Stratégie"), ("Authorization/policyAssignments",),
     ("configuration", "security", "monitoring"), None),
    (("Monitor", "Überwachung", "Surveillance"), ("Insights/components",),
     ("monitoring", "configuration", "data"), None),
    (("Log Analytics", "Log Analytics", "Log Analytics"), ("OperationalInsights/workspaces",),
     ("monitoring", "data", "performance"), None),
    (("Backup", "Sicherung", "Sauvegarde"), ("RecoveryServices/vaults",),
     ("backup", "configuration", "monitoring"), None),
    (("Site Recovery", "Site Recovery", "Site Recovery"), ("RecoveryServices/vaults",),
     ("backup", "connectivity", "deployment"), None),
    (("Event Hubs", "Event Hubs", "Event Hubs"), ("EventHub/namespaces",),
     ("connectivity", "performance", "scaling"), None),
    (("Service Bus", "Service Bus", "Service Bus"), ("ServiceBus/namespaces",),
     ("connectivity", "performance", "data"), None),
    (("Maps", "Karten", "Cartes"), ("Maps/accounts",),
     ("performance", "configuration", "security"), None),
    (("Entra ID Sign-in and Conditional Access", "Entra ID-Anmeldung und bedingter Zugriff",
      "Connexion Entra ID et accès conditionnel"), (),
     ("security", "configuration", "monitoring"), None),
    (("Partner Analytics Workspace", "Partner-Analysearbeitsbereich",
      "Espace de travail d'analyse partenaire"), ("PartnerAnalytics/workspaces",),
     ("workspace", "performance", "connectivity", "security"), "PartnerConsent"),
    (("Marketplace Partner Solutions", "Marketplace-Partnerlösungen",
      "Solutions partenaires de la place de marché"), (),
     ("deployment", "configuration", "invoices"), "MarketplacePartnerConsent"),
    (("Billing", "Abrechnung", "Facturation"), (),
     ("reservations", "invoices"), None),
    (("Subscription Management", "Abonnementverwaltung", "Gestion des abonnements"), (),
     ("configuration", "invoices"), None),
    (("Eventstreams", "Eventstreams", "Flux d'événements"), (),
     ("deployment", "performance", "data"), None),
)

#: A general problem every service has, beside its areas' problems.
_GENERAL: T = ("Other General Questions", "Andere allgemeine Fragen", "Autres questions générales")


@dataclass
class SupportService:
    """A support service and its problem classifications."""

    name: str
    display: T
    resource_types: list[str]
    classifications: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class SupportWorld:
    """The support part of the world: services in display-name order."""

    services: list[SupportService]

    def service(self, name: str) -> SupportService | None:
        """Find the service of that name (case-insensitive)."""
        low = name.lower()
        return next((s for s in self.services if s.name == low), None)


def _uuid(rng: Any) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def build_world(world: World) -> SupportWorld:
    """Build the services and their classifications, deterministic from the seed."""
    rng = world.rng("support")
    ns = world.namespace
    services = []
    for display, types, areas, consent in _SERVICES:
        hosted = f"{world.words.hosted_cluster_provider}/{world.words.hosted_cluster_type}"
        service = SupportService(_uuid(rng), display,
                                 [(hosted if t == _HOSTED else f"{ns}.{t}").upper()
                                  for t in types])
        created = world.epoch - timedelta(days=rng.randint(200, 1400))
        entries: list[tuple[T, str]] = []
        for area in areas:
            area_text, problems = _AREAS[area]
            # a service offers most of an area's problems, not always all of them
            keep = [p for p in problems if rng.random() < 0.85] or problems[:1]
            for p in keep:
                entries.append((tuple(f"{a} / {b}" for a, b in zip(area_text, p, strict=True)),
                                area))  # type: ignore[arg-type]
        entries.append((_GENERAL, "general"))
        entries.sort(key=lambda e: e[0][0])
        for text, area in entries:
            name = _uuid(rng)
            needs = consent is not None and (area != "general" or rng.random() < 0.5)
            modified = created + timedelta(days=rng.randint(0, 180), minutes=rng.randint(0, 1440))
            service.classifications.append({
                "name": name, "text": text, "consent": consent if needs else None,
                "createdAt": created, "lastModifiedAt": modified,
            })
        services.append(service)
    services.sort(key=lambda s: s.display[0].lower())
    return SupportWorld(services)


def _language_index(request: Request) -> int:
    """Index into the (en, de, fr) texts for the request's Accept-Language."""
    header = request.headers.get("accept-language") or ""
    for part in header.split(","):
        tag = part.split(";")[0].strip().lower()
        primary = tag.split("-")[0]
        if primary in LANGUAGES:
            return LANGUAGES.index(primary)
    return 0


def _iso(when: Any) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _services(request: Request) -> Reply:
    support: SupportWorld = request.sandbox.world.section("support")
    ns = request.sandbox.namespace
    lang = _language_index(request)
    value = [{"id": f"/providers/{ns}.Support/services/{s.name}", "name": s.name,
              "type": f"{ns}.Support/services",
              "properties": {"displayName": s.display[lang], "resourceTypes": s.resource_types}}
             for s in sorted(support.services, key=lambda s: s.display[lang].lower())]
    reply = arm_reply(request, {"value": value})
    reply.headers["Content-Language"] = LANGUAGES[lang]
    return reply


def _classifications(request: Request) -> Reply:
    support: SupportWorld = request.sandbox.world.section("support")
    sandbox = request.sandbox
    ns = sandbox.namespace
    name = request.path_params["serviceName"]
    service = support.service(name)
    if service is None:
        raise SandboxHTTPError(404, "ResourceNotFound",
                               f"The service '{name}' was not found. List the services "
                               f"(GET /providers/{ns}.Support/services) to find its name.",
                               target="serviceName")
    token = request.param("$skiptoken") or "0"
    if not token.isdigit() or int(token) > len(service.classifications):
        raise SandboxHTTPError(400, "InvalidSkipToken", f"The skip token '{token}' is not valid.")
    start = int(token)
    lang = _language_index(request)
    base = f"/providers/{ns}.Support/services/{service.name}/problemClassifications"
    value = []
    for c in service.classifications[start:start + PAGE_SIZE]:
        props: dict[str, Any] = {"displayName": c["text"][lang]}
        if c["consent"]:
            props["secondaryConsentEnabled"] = [
                {"type": c["consent"], "description": _CONSENTS[c["consent"]][lang].replace(
                    "Vendor", request.sandbox.namespace)}]
        value.append({
            "id": f"{base}/{c['name']}", "name": c["name"],
            "type": f"{ns}.Support/problemClassifications", "properties": props,
            "systemData": {"createdBy": "support-catalog@vendor.example",
                           "createdByType": "Application",
                           "createdAt": _iso(c["createdAt"]),
                           "lastModifiedBy": "support-catalog@vendor.example",
                           "lastModifiedByType": "Application",
                           "lastModifiedAt": _iso(c["lastModifiedAt"])},
        })
    body: dict[str, Any] = {"value": value}
    if start + PAGE_SIZE < len(service.classifications):
        body[NEXT_KEY] = (f"{request.base_url}{base}?api-version={request.param('api-version')}"
                            f"&$skiptoken={start + PAGE_SIZE}")
    reply = arm_reply(request, body)
    reply.headers["Content-Language"] = LANGUAGES[lang]
    return reply


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the services and problem classification routes."""
    router.add("GET", "/providers/{ns}.Support/services", _services, family="arm",
               api_versions=API_VERSIONS, name="support_services")
    router.add("GET", "/providers/{ns}.Support/services/{serviceName}/problemClassifications",
               _classifications, family="arm", api_versions=API_VERSIONS,
               name="problem_classifications")

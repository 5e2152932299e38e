/**
 * The sandbox's fixed demo catalogue: folders, workflows, steps, form fields and users.
 *
 * This is deliberately static (not drawn from the seed) so that the starter rules in `rules/`, the examples and the
 * tests can name real ids. The seed only drives the instances generated over this catalogue.
 */

export type FieldType = "text" | "number" | "date" | "radio" | "checklist";

export interface CatalogAction {
  id: number;
  name: string;
  type: FieldType;
  /** radio options or checklist items */
  options?: string[];
  /** the form marks it required (reported in `settings`; the sandbox does not enforce it) */
  required?: boolean;
}

export interface CatalogStep {
  id: number;
  name: string;
  position: number;
  type: "form";
  /** user ids of the assigned step owners */
  owners: number[];
  actions: CatalogAction[];
}

export interface CatalogWorkflow {
  id: number;
  name: string;
  description: string;
  folder: { id: number; name: string };
  /** user ids of the workflow leads */
  leads: number[];
  visibility_mode: "public" | "involved" | "involved_plus" | "restrictive";
  stages: string[];
  steps: CatalogStep[];
}

export type Role = "administrator" | "lead" | "member" | "outsider";

export interface CatalogUser {
  id: number;
  name: string;
  key: string;
  role: Role;
  /** team ids, for visibility_teams */
  teams: number[];
}

/** Demo keys: fixed strings for local use only (docs/sandbox.md). */
export const USERS: readonly CatalogUser[] = [
  { id: 1, name: "Ada Admin", key: "sandbox-admin", role: "administrator", teams: [10] },
  { id: 2, name: "Lee Lead", key: "sandbox-lead", role: "lead", teams: [11] },
  { id: 3, name: "Mo Member", key: "sandbox-member", role: "member", teams: [12] },
  { id: 4, name: "Oz Outsider", key: "sandbox-outsider", role: "outsider", teams: [13] },
];

export const TAG_POOL: readonly string[] = ["expenses", "urgent", "travel", "q4", "vip", "hr", "it", "audit"];

export const WORKFLOWS: readonly CatalogWorkflow[] = [
  {
    id: 1042,
    name: "Expense claim",
    description: "Employees claim back business expenses; a manager approves, finance pays.",
    folder: { id: 1, name: "Finance" },
    leads: [2],
    visibility_mode: "involved",
    stages: ["Submitted", "Approval", "Payment"],
    steps: [
      {
        id: 20110,
        name: "Submit claim",
        position: 1,
        type: "form",
        owners: [1],
        actions: [
          { id: 50220, name: "Description", type: "text" },
          { id: 50221, name: "Category", type: "radio", options: ["Travel", "Meals", "Equipment", "Other"] },
        ],
      },
      {
        id: 20111,
        name: "Manager approval",
        position: 2,
        type: "form",
        owners: [3],
        actions: [
          { id: 50222, name: "Amount", type: "number" },
          { id: 50223, name: "Currency", type: "radio", options: ["EUR", "USD", "GBP"] },
          { id: 50230, name: "Manager comment", type: "text" },
          { id: 50231, name: "Approved on", type: "date" },
        ],
      },
      {
        id: 20112,
        name: "Finance review",
        position: 3,
        type: "form",
        owners: [1],
        actions: [
          {
            id: 50240,
            name: "Checks",
            type: "checklist",
            options: ["Receipt attached", "VAT valid", "Budget code ok"],
          },
          { id: 50241, name: "Paid on", type: "date" },
        ],
      },
    ],
  },
  {
    id: 1043,
    name: "Employee onboarding",
    description: "Paperwork, equipment and a first day for every new employee.",
    folder: { id: 2, name: "People" },
    leads: [2],
    visibility_mode: "involved_plus",
    stages: ["Paperwork", "Setup", "Welcome"],
    steps: [
      {
        id: 20120,
        name: "HR paperwork",
        position: 1,
        type: "form",
        owners: [1],
        actions: [
          { id: 50250, name: "Start date", type: "date" },
          { id: 50251, name: "Contract type", type: "radio", options: ["Permanent", "Fixed-term", "Contractor"] },
        ],
      },
      {
        id: 20121,
        name: "IT setup",
        position: 2,
        type: "form",
        owners: [3],
        actions: [
          { id: 50252, name: "Equipment", type: "checklist", options: ["Laptop", "Phone", "Badge"] },
          { id: 50253, name: "Notes", type: "text" },
        ],
      },
      {
        id: 20122,
        name: "First day",
        position: 3,
        type: "form",
        owners: [1],
        actions: [{ id: 50254, name: "Buddy", type: "text" }],
      },
    ],
  },
  {
    id: 1044,
    name: "Purchase request",
    description: "Requests for goods: budget approval, then ordering.",
    folder: { id: 1, name: "Finance" },
    leads: [1],
    visibility_mode: "public",
    stages: ["Request", "Budget", "Ordering"],
    steps: [
      {
        id: 20130,
        name: "Request",
        position: 1,
        type: "form",
        owners: [1],
        actions: [
          { id: 50260, name: "Item", type: "text" },
          { id: 50261, name: "Quantity", type: "number" },
          { id: 50262, name: "Unit price", type: "number" },
        ],
      },
      {
        id: 20131,
        name: "Budget approval",
        position: 2,
        type: "form",
        owners: [1],
        actions: [
          { id: 50263, name: "Decision", type: "radio", options: ["Approve", "Reject"] },
          { id: 50264, name: "Comment", type: "text" },
        ],
      },
      {
        id: 20132,
        name: "Order",
        position: 3,
        type: "form",
        owners: [1],
        actions: [{ id: 50265, name: "Ordered on", type: "date" }],
      },
    ],
  },
  {
    id: 1045,
    name: "Access request",
    description: "Access to internal systems, reviewed by security.",
    folder: { id: 3, name: "IT" },
    leads: [1],
    visibility_mode: "restrictive",
    stages: ["Request", "Review", "Provisioning"],
    steps: [
      {
        id: 20140,
        name: "Request access",
        position: 1,
        type: "form",
        owners: [1],
        actions: [
          { id: 50270, name: "System", type: "radio", options: ["CRM", "ERP", "Wiki"] },
          { id: 50271, name: "Justification", type: "text" },
        ],
      },
      {
        id: 20141,
        name: "Security review",
        position: 2,
        type: "form",
        owners: [1],
        actions: [
          { id: 50272, name: "Risk score", type: "number" },
          { id: 50273, name: "Controls", type: "checklist", options: ["MFA", "Least privilege", "Expiry set"] },
        ],
      },
      {
        id: 20142,
        name: "Provision",
        position: 3,
        type: "form",
        owners: [1],
        actions: [{ id: 50274, name: "Done on", type: "date" }],
      },
    ],
  },
];
